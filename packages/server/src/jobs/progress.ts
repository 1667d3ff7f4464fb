/**
 * Progress of a job on the CLI: a bar (cli-progress) when stdout is a terminal, otherwise a plain line every
 * few seconds (logs, CI, a pipe), so the output stays readable wherever it goes.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

const PLAIN_EVERY_MS = 2000;

function rate(done: number, startedAt: number): number {
  const seconds = (Date.now() - startedAt) / 1000;
  return seconds > 0 ? Math.round(done / seconds) : 0;
}

export function createProgress(label: string, unit: string, out: NodeJS.WriteStream = process.stdout): Progress {
  const startedAt = Date.now();
  if (out.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} |{bar}| {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_formatted}`,
        hideCursor: true,
        stream: out,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total) {
        if (!started) {
          bar.start(Math.max(total, 1), done, { rate: 0 });
          started = true;
        }
        bar.setTotal(Math.max(total, 1));
        bar.update(done, { rate: rate(done, startedAt) });
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  let printedAt = 0;
  let last = '';
  const line = (done: number, total: number) => {
    const percentage = total > 0 ? Math.floor((done * 100) / total) : 100;
    return `${label}: ${done}/${total} ${unit} (${percentage}%), ${rate(done, startedAt)} ${unit}/s`;
  };
  return {
    update(done, total) {
      last = line(done, total);
      if (Date.now() - printedAt < PLAIN_EVERY_MS) return;
      printedAt = Date.now();
      out.write(`${last}\n`);
    },
    stop() {
      if (last && Date.now() - printedAt > 0) out.write(`${last}\n`);
    },
  };
}
