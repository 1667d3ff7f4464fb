/** The channel the test login's callback page (test-login.ts) answers the console's application page on. */
export const TEST_LOGIN_CHANNEL = 'gatehouse-console-test-login';

export interface TestLoginAnswer {
  /** The callback's query: code and state, or error and error_description. */
  search: string;
}
