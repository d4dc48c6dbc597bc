// The contract's types, generated once from spec/openapi.yaml into spec/generated/ for the
// server and the SDK alike; server modules import them from here, inside their own package.
export type { components, operations, paths } from '../../../spec/generated/openapi.js';
