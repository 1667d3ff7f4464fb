/** The server as a library: what tests, the bench and embedders use. */
export { buildApp } from './app.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export { prepare, startServer, type RunningServer, type Prepared } from './server.js';
