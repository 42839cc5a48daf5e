export { ExistingProviderError, InjectionError, type InjectionErrorCode } from "./errors";
export { injectBackendWrapper, type InjectionResult } from "./layout";
export { getBackendTemplateFiles, type TemplateFile } from "./templates";
export { renameEnvReads } from "./env-reference";
