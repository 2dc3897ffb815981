/** A kind of credential the redactor recognises, named in `[REDACTED:<kind>]` markers and security events. */
export type CredentialKind =
  | 'pem_private_key'
  | 'aws_access_key_id'
  | 'aws_secret_access_key'
  | 'github_token'
  | 'slack_token'
  | 'stripe_secret_key'
  | 'anthropic_api_key'
  | 'openai_api_key'
  | 'google_api_key'
  | 'jwt'
  | 'bearer_token'
  | 'connection_string_password'
  | 'assigned_secret'
  | 'putty_private_key'
  | 'slack_webhook'
  | 'stripe_webhook_secret'
  | 'google_oauth_client_secret'
  | 'azure_storage_key'
  | 'azure_sas_token'
  | 'http_basic_credentials'
  | 'npm_token'
  | 'huggingface_token'
  | 'sendgrid_api_key'
  | 'twilio_auth_token'
  | 'hex_private_key'
  | 'bip39_mnemonic';

/** One stretch of text to replace by `[REDACTED:<kind>]`. */
export interface CredentialSpan {
  start: number;
  end: number;
  kind: CredentialKind;
  /** Breaks ties between spans that start together: lower wins (more specific). */
  rank: number;
}
