/**
 * Every chat-template token, instruction marker, prompt tag and turn-header role the
 * sanitiser neutralises, as one data table (README *Governed tools*, "What the model sees").
 * `role-tokens.ts` builds its name sets from this table, and
 * `test/tools/model-markers.property.test.ts` walks it: each entry's example is neutralised
 * in every case, width and spacing variant. Adding a family means adding a row here; a row
 * the scanner does not honour fails that test.
 */

/** Names used in sanitiser findings (`role_token` details). */
export type RolePatternName =
  | 'chat_template_token'
  | 'instruction_marker'
  | 'tool_tag'
  | 'turn_header';

/**
 * How a marker is written, which decides how it is found:
 * - `pipe_token`: `<|…|>` (any body of at most 64 characters; the name is documentation);
 * - `square_marker`: `[NAME]` and `[/NAME]`;
 * - `double_angle`: `<<NAME>>` and `<</NAME>>`;
 * - `tag`: `<NAME …>` / `</NAME>` with exactly this name;
 * - `tag_prefix`: `<NAME…>` / `</NAME…>`, any tag name starting with this one (`tool_result`);
 * - `header`: a line opening with `NAME:` (also `### NAME:`, `**NAME**:`);
 * - `quoted_header`: as `header`, and also as a JSON key (`"NAME":`), for role words no
 *   ordinary JSON key is called.
 */
export type MarkerForm =
  | 'pipe_token'
  | 'square_marker'
  | 'double_angle'
  | 'tag'
  | 'tag_prefix'
  | 'header'
  | 'quoted_header';

/** One row of {@link MODEL_MARKERS}. */
export interface ModelMarker {
  /** Model family or prompt convention the marker belongs to. */
  family: string;
  form: MarkerForm;
  /** Lower-case ASCII name as matched (folded from any case and full-width spelling). */
  name: string;
  /** The marker as the family writes it. */
  example: string;
}

/** The finding name each form is reported under. */
export const PATTERN_OF_FORM: Readonly<Record<MarkerForm, RolePatternName>> = {
  pipe_token: 'chat_template_token',
  square_marker: 'instruction_marker',
  double_angle: 'instruction_marker',
  tag: 'tool_tag',
  tag_prefix: 'tool_tag',
  header: 'turn_header',
  quoted_header: 'turn_header',
};

/** Every marker the sanitiser neutralises; see the module comment. */
export const MODEL_MARKERS: readonly ModelMarker[] = [
  // Chat-template special tokens: matched by shape, so a family not listed is caught too.
  {
    family: 'ChatML (Qwen, OpenAI)',
    form: 'pipe_token',
    name: 'im_start',
    example: '<|im_start|>',
  },
  { family: 'ChatML (Qwen, OpenAI)', form: 'pipe_token', name: 'im_end', example: '<|im_end|>' },
  { family: 'Llama 3', form: 'pipe_token', name: 'begin_of_text', example: '<|begin_of_text|>' },
  {
    family: 'Llama 3',
    form: 'pipe_token',
    name: 'start_header_id',
    example: '<|start_header_id|>',
  },
  { family: 'Llama 3', form: 'pipe_token', name: 'eot_id', example: '<|eot_id|>' },
  { family: 'GPT-2, Phi', form: 'pipe_token', name: 'endoftext', example: '<|endoftext|>' },
  { family: 'Phi 3', form: 'pipe_token', name: 'assistant', example: '<|assistant|>' },
  { family: 'OpenAI harmony', form: 'pipe_token', name: 'channel', example: '<|channel|>' },
  {
    family: 'DeepSeek',
    form: 'pipe_token',
    name: 'begin▁of▁sentence',
    example: '<｜begin▁of▁sentence｜>',
  },
  { family: 'DeepSeek', form: 'pipe_token', name: 'Assistant', example: '<｜Assistant｜>' },
  // Instruction markers.
  { family: 'Llama 2, Mistral', form: 'square_marker', name: 'inst', example: '[INST]' },
  { family: 'Llama 2, Mistral', form: 'square_marker', name: 'inst', example: '[/INST]' },
  { family: 'Llama 2', form: 'double_angle', name: 'sys', example: '<<SYS>>' },
  { family: 'Llama 2', form: 'double_angle', name: 'sys', example: '<</SYS>>' },
  { family: 'Mistral', form: 'square_marker', name: 'sys', example: '[SYS]' },
  {
    family: 'Mistral',
    form: 'square_marker',
    name: 'system_prompt',
    example: '[SYSTEM_PROMPT]',
  },
  {
    family: 'Mistral',
    form: 'square_marker',
    name: 'available_tools',
    example: '[AVAILABLE_TOOLS]',
  },
  { family: 'Mistral', form: 'square_marker', name: 'tool_calls', example: '[TOOL_CALLS]' },
  { family: 'Mistral', form: 'square_marker', name: 'tool_results', example: '[TOOL_RESULTS]' },
  { family: 'Mistral', form: 'square_marker', name: 'tool_content', example: '[TOOL_CONTENT]' },
  // Prompt tags: tool results, function calls, turns in XML-style prompts.
  { family: 'Gemma', form: 'tag', name: 'start_of_turn', example: '<start_of_turn>' },
  { family: 'Gemma', form: 'tag', name: 'end_of_turn', example: '<end_of_turn>' },
  { family: 'XML tool prompts', form: 'tag', name: 'tools', example: '<tools>' },
  { family: 'XML tool prompts', form: 'tag', name: 'invoke', example: '<invoke name="x">' },
  { family: 'XML tool prompts', form: 'tag', name: 'parameter', example: '<parameter name="x">' },
  { family: 'XML prompts', form: 'tag', name: 'instruction', example: '<instruction>' },
  { family: 'XML prompts', form: 'tag', name: 'instructions', example: '</instructions>' },
  { family: 'XML prompts', form: 'tag', name: 'important', example: '<IMPORTANT>' },
  { family: 'XML tool prompts', form: 'tag_prefix', name: 'tool', example: '</tool_result>' },
  {
    family: 'XML tool prompts',
    form: 'tag_prefix',
    name: 'function',
    example: '<function_calls>',
  },
  { family: 'XML prompts', form: 'tag_prefix', name: 'system', example: '<system-reminder>' },
  { family: 'XML prompts', form: 'tag_prefix', name: 'user', example: '<user_query>' },
  { family: 'XML prompts', form: 'tag_prefix', name: 'assistant', example: '<assistant>' },
  { family: 'XML prompts', form: 'tag_prefix', name: 'human', example: '<human>' },
  { family: 'XML prompts', form: 'tag_prefix', name: 'developer', example: '<developer>' },
  // Fake turn headers at the start of a line.
  { family: 'transcripts', form: 'quoted_header', name: 'system', example: 'System:' },
  { family: 'transcripts', form: 'quoted_header', name: 'assistant', example: '### Assistant:' },
  { family: 'OpenAI', form: 'quoted_header', name: 'developer', example: 'Developer:' },
  { family: 'Anthropic', form: 'quoted_header', name: 'human', example: '**Human**:' },
  { family: 'transcripts', form: 'header', name: 'user', example: 'User:' },
  { family: 'Gemma', form: 'header', name: 'model', example: 'model:' },
  { family: 'transcripts', form: 'header', name: 'tool', example: '[tool]:' },
  { family: 'transcripts', form: 'header', name: 'ai', example: 'AI:' },
];

/** The names of the rows written in one of `forms`, once each. */
export function markerNames(...forms: MarkerForm[]): string[] {
  return [
    ...new Set(MODEL_MARKERS.filter((row) => forms.includes(row.form)).map((row) => row.name)),
  ];
}
