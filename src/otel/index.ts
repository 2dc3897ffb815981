export { MAX_ATTRIBUTE_LENGTH, safeAttributes, scrubbedValue } from './event-attributes.js';
export { type OtelExporter, type OtelExporterOptions, otelExporter } from './otel-exporter.js';
