/** Start: read the tenant's console configuration, sign in, then render. */
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { messageOf } from './api.js';
import { signIn } from './auth.js';
import { loadConfig } from './config.js';
import './style.css';

const root = createRoot(document.getElementById('root')!);

async function start(): Promise<void> {
  const config = await loadConfig();
  const session = await signIn(config);
  root.render(<App config={config} session={session} />);
}

start().catch((error: unknown) => {
  root.render(
    <main className="narrow" id="main">
      <h1>The console could not start</h1>
      <p className="notice problem" role="alert">
        {messageOf(error)}
      </p>
      <p>
        <a href="./">Try again</a>
      </p>
    </main>,
  );
});
