export { createClient, SDK_VERSION, API_KEY_ENV, BASE_URL_ENV } from './client.js';
export type {
  AgentlineClient,
  ClientOptions,
  RequestOptions,
  EventListQuery,
  PromptListQuery,
  ExperimentListQuery,
} from './client.js';
export * from './errors.js';
export type { components, paths, operations } from './generated/openapi.js';
