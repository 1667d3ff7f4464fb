/** Job fixtures over real HTTP: Management API calls with a token, a users file upload, and waiting for a job. */
import type { TestServer } from './server.js';

type Json = Record<string, unknown>;

export interface JobsApi {
  call(method: string, path: string, body?: unknown, bearer?: string): Promise<Response>;
  /** POST /jobs/users-imports with `file` as the users part, and the fields given (connection_id when set). */
  upload(file: string | Buffer, fields?: Record<string, string>, bearer?: string): Promise<Response>;
  /** The job once it is completed or failed (polled). */
  finished(jobId: string): Promise<Json>;
}

export function jobsApi(server: () => TestServer, token: () => string, connectionId: () => string): JobsApi {
  const call: JobsApi['call'] = (method, path, body, bearer = token()) =>
    fetch(`${server().url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  return {
    call,
    upload(file, fields = {}, bearer = token()) {
      const form = new FormData();
      form.append('users', new Blob([file], { type: 'application/json' }), 'users.json');
      for (const [name, value] of Object.entries({ connection_id: connectionId(), ...fields })) form.append(name, value);
      return fetch(`${server().url}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` }, body: form });
    },
    async finished(jobId) {
      for (let i = 0; i < 1200; i++) {
        const job = (await (await call('GET', `/jobs/${jobId}`)).json()) as Json;
        if (job.status === 'completed' || job.status === 'failed') return job;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`job ${jobId} did not finish`);
    },
  };
}
