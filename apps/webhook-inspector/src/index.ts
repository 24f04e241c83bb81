export {
  createInspector,
  DEFAULT_MAX_DELIVERIES,
  MAX_BODY_BYTES,
  type Inspector,
  type InspectorOptions,
} from './inspector';
export type { DeliveryErrorReason, ReceivedDelivery, SecretsStatus } from './types';
export { escapeHtml, renderPage, type PageInput } from './page';
export {
  ConfigError,
  DEFAULT_SECRET_FILE,
  loadConfig,
  readSecretFile,
  SecretsUnavailableError,
  type InspectorConfig,
} from './config/env';
export {
  type CaughtMail,
  createMailCatcher,
  DEFAULT_MAX_MESSAGES,
  type MailCatcher,
  renderMailPage,
} from './mail-catcher';
