/**
 * The test login's callback (/console/test-login.html): hands the answer to the console tab that started the
 * test (same origin, so a BroadcastChannel reaches it whatever the tabs' opener relation), then takes the code
 * out of the address bar. The console tab checks the state and exchanges the code; this page keeps nothing.
 */
import { TEST_LOGIN_CHANNEL, type TestLoginAnswer } from './test-login-channel.js';

const channel = new BroadcastChannel(TEST_LOGIN_CHANNEL);
channel.postMessage({ search: window.location.search } satisfies TestLoginAnswer);
channel.close();
window.history.replaceState(null, '', window.location.pathname);
const status = document.getElementById('status');
if (status) status.textContent = "Done: the result is on the application's page in the console tab. You can close this tab.";
