/**
 * Attack protection: brute-force protection, suspicious IP throttling and breached password detection, each
 * read and saved on its own (/attack-protection/*), with the API's refusal shown in its card.
 */
import { useEffect, useState } from 'react';
import type { ManagementApi } from '../api.js';
import { Choices, linesOf, SelectField, TextArea, TextField } from '../components/fields.js';
import { SwitchField } from '../components/SwitchField.js';
import { FormCard } from '../components/FormCard.js';
import { ErrorNotice, useLoad } from '../ui.js';

interface BruteForce {
  enabled: boolean;
  shields: string[];
  allowlist: string[];
  mode: string;
  max_attempts: number;
}

interface Throttle {
  max_attempts: number;
  rate: number;
}

interface SuspiciousIp {
  enabled: boolean;
  shields: string[];
  allowlist: string[];
  stage: { 'pre-login': Throttle; 'pre-user-registration': Throttle };
}

interface BreachedPassword {
  enabled: boolean;
  shields: string[];
  admin_notification_frequency: string[];
  method: string;
}

/** Loads a settings object and keeps an editable copy that follows each fresh read. */
function useSettings<T>(api: ManagementApi, path: string) {
  const loaded = useLoad(() => api.get<T>(path), [path]);
  const [draft, setDraft] = useState<T>();
  useEffect(() => setDraft(loaded.data), [loaded.data]);
  return { loaded, draft, setDraft };
}

function Pending({ error }: { error: string | undefined }) {
  return error ? <ErrorNotice message={error} /> : <p className="loading">Loading…</p>;
}

const allowlistHint = 'IP addresses or CIDR ranges, one a line: never blocked.';

function BruteForceCard({ api }: { api: ManagementApi }) {
  const path = '/attack-protection/brute-force-protection';
  const { loaded, draft, setDraft } = useSettings<BruteForce>(api, path);
  const [allowlist, setAllowlist] = useState('');
  useEffect(() => setAllowlist((loaded.data?.allowlist ?? []).join('\n')), [loaded.data]);
  if (!draft) return <Pending error={loaded.error} />;
  return (
    <FormCard
      title="Brute-force protection"
      submitLabel="Save brute-force protection"
      testId="brute-force"
      intro={<p>Stops repeated failed logins to one account.</p>}
      onSubmit={async () => {
        loaded.show(await api.request<BruteForce>('PATCH', path, { ...draft, allowlist: linesOf(allowlist) }));
        return 'Saved.';
      }}
    >
      <SwitchField label="Enabled" checked={draft.enabled} onValue={(enabled) => setDraft({ ...draft, enabled })} />
      <div className="row by-label">
        <TextField
          grow
          label="Failed attempts before blocking"
          type="number"
          min={1}
          max={100}
          required
          value={String(draft.max_attempts)}
          onValue={(v) => setDraft({ ...draft, max_attempts: Number(v) })}
        />
        <SelectField
          grow
          label="Count attempts"
          value={draft.mode}
          onValue={(mode) => setDraft({ ...draft, mode })}
          choices={[
            ['count_per_identifier_and_ip', 'Per account and IP address'],
            ['count_per_identifier', 'Per account, from any IP address'],
          ]}
        />
      </div>
      <Choices
        legend="Responses"
        options={[
          ['block', 'Block the account from that IP address'],
          ['user_notification', 'Email the account’s owner'],
        ]}
        value={draft.shields}
        onValue={(shields) => setDraft({ ...draft, shields })}
      />
      <TextArea label="Allow list" hint={allowlistHint} value={allowlist} onValue={setAllowlist} rows={2} />
    </FormCard>
  );
}

function SuspiciousIpCard({ api }: { api: ManagementApi }) {
  const path = '/attack-protection/suspicious-ip-throttling';
  const { loaded, draft, setDraft } = useSettings<SuspiciousIp>(api, path);
  const [allowlist, setAllowlist] = useState('');
  useEffect(() => setAllowlist((loaded.data?.allowlist ?? []).join('\n')), [loaded.data]);
  if (!draft) return <Pending error={loaded.error} />;
  const stage = (name: 'pre-login' | 'pre-user-registration', key: keyof Throttle, value: string) =>
    setDraft({ ...draft, stage: { ...draft.stage, [name]: { ...draft.stage[name], [key]: Number(value) } } });
  return (
    <FormCard
      title="Suspicious IP throttling"
      submitLabel="Save IP throttling"
      testId="suspicious-ip"
      intro={<p>Slows down an IP address that tries many accounts or signs up many times.</p>}
      onSubmit={async () => {
        const saved = await api.request<SuspiciousIp>('PATCH', path, {
          enabled: draft.enabled,
          shields: draft.shields,
          allowlist: linesOf(allowlist),
          stage: { 'pre-login': draft.stage['pre-login'], 'pre-user-registration': draft.stage['pre-user-registration'] },
        });
        loaded.show(saved);
        return 'Saved.';
      }}
    >
      <SwitchField label="Enabled" checked={draft.enabled} onValue={(enabled) => setDraft({ ...draft, enabled })} />
      <div className="row by-label">
        <TextField grow label="Failed logins allowed per IP address" type="number" min={1} required value={String(draft.stage['pre-login'].max_attempts)} onValue={(v) => stage('pre-login', 'max_attempts', v)} />
        <TextField
          grow
          label="One login attempt given back every (seconds)"
          type="number"
          min={0.001}
          step="any"
          required
          value={String(draft.stage['pre-login'].rate / 1000)}
          onValue={(v) => stage('pre-login', 'rate', String(Math.round(Number(v) * 1000)))}
        />
      </div>
      <div className="row by-label">
        <TextField
          grow
          label="Sign-ups allowed per IP address"
          type="number"
          min={1}
          required
          value={String(draft.stage['pre-user-registration'].max_attempts)}
          onValue={(v) => stage('pre-user-registration', 'max_attempts', v)}
        />
        <TextField
          grow
          label="One sign-up given back every (seconds)"
          type="number"
          min={0.001}
          step="any"
          required
          value={String(draft.stage['pre-user-registration'].rate / 1000)}
          onValue={(v) => stage('pre-user-registration', 'rate', String(Math.round(Number(v) * 1000)))}
        />
      </div>
      <Choices
        legend="Responses"
        options={[
          ['block', 'Block the IP address'],
          ['admin_notification', 'Email the tenant’s administrators'],
        ]}
        value={draft.shields}
        onValue={(shields) => setDraft({ ...draft, shields })}
      />
      <TextArea label="Allow list" hint={allowlistHint} value={allowlist} onValue={setAllowlist} rows={2} />
    </FormCard>
  );
}

function BreachedPasswordCard({ api }: { api: ManagementApi }) {
  const path = '/attack-protection/breached-password-detection';
  const { loaded, draft, setDraft } = useSettings<BreachedPassword>(api, path);
  if (!draft) return <Pending error={loaded.error} />;
  return (
    <FormCard
      title="Breached password detection"
      submitLabel="Save breached password detection"
      testId="breached-password"
      intro={<p>Refuses or flags passwords known from public data breaches.</p>}
      onSubmit={async () => {
        loaded.show(
          await api.request<BreachedPassword>('PATCH', path, { enabled: draft.enabled, shields: draft.shields, admin_notification_frequency: draft.admin_notification_frequency, method: draft.method }),
        );
        return 'Saved.';
      }}
    >
      <SwitchField label="Enabled" checked={draft.enabled} onValue={(enabled) => setDraft({ ...draft, enabled })} />
      <SelectField
        label="Detection"
        value={draft.method}
        onValue={(method) => setDraft({ ...draft, method })}
        choices={[
          ['standard', 'Standard'],
          ['enhanced', 'Enhanced'],
        ]}
      />
      <Choices
        legend="Responses"
        options={[
          ['block', 'Block logins with a breached password until it is changed'],
          ['user_notification', 'Email the user'],
          ['admin_notification', 'Email the tenant’s administrators'],
        ]}
        value={draft.shields}
        onValue={(shields) => setDraft({ ...draft, shields })}
      />
      <Choices
        legend="Administrator emails"
        options={[
          ['immediately', 'Immediately'],
          ['daily', 'Daily'],
          ['weekly', 'Weekly'],
          ['monthly', 'Monthly'],
        ]}
        value={draft.admin_notification_frequency}
        onValue={(admin_notification_frequency) => setDraft({ ...draft, admin_notification_frequency })}
      />
    </FormCard>
  );
}

export function AttackProtection({ api }: { api: ManagementApi }) {
  return (
    <>
      <h1>Attack protection</h1>
      <p className="lead">How this tenant answers password guessing, credential stuffing and breached passwords.</p>
      <BruteForceCard api={api} />
      <SuspiciousIpCard api={api} />
      <BreachedPasswordCard api={api} />
    </>
  );
}
