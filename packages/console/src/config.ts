/** What the server says about the tenant this console is served by (GET /console/config.json). */
export interface ConsoleConfig {
  /** The tenant's base URL, e.g. http://localhost:3000 */
  domain: string;
  clientId: string;
  /** The Management API's audience (its identifier). */
  audience: string;
  issuer: string;
  tenantName: string;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch('config.json', { headers: { accept: 'application/json' } });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { error_description?: string };
    throw new Error(body.error_description ?? `The console's configuration could not be read (${response.status})`);
  }
  return (await response.json()) as ConsoleConfig;
}
