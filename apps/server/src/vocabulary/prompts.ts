// The prompts list's property names, which its rules (domain/prompts.ts) and the prompts
// repository both name.

import type { components } from '../spec-types.js';

export type PromptProperty = components['schemas']['PromptProperties'];
