/**
 * Role-impersonation patterns in tool output: text that a model (or its chat template) could
 * read as the start of another turn or the end of the tool result. Each is rewritten into a
 * visibly quoted form its own pattern does not match again; since one rewrite can complete
 * another pattern's match ("<|<<SYS>>|>"), `sanitizeOutput` applies them until nothing changes.
 */
interface RolePattern {
  /** Named in sanitiser findings. */
  name: string;
  pattern: RegExp;
  neutralise(match: string, ...groups: string[]): string;
}

const escapeAngles = (match: string): string => match.replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The role-impersonation patterns, applied in order. */
export const ROLE_PATTERNS: readonly RolePattern[] = [
  {
    // ChatML and friends: <|im_start|>, <|eot_id|>, <|start_header_id|>, DeepSeek's <｜…｜>.
    name: 'chat_template_token',
    pattern: /<[|｜][^<>\n]{1,64}?[|｜]>/g,
    neutralise: escapeAngles,
  },
  {
    // Llama 2 / Mistral / Gemma markers.
    name: 'instruction_marker',
    pattern:
      /\[\/?(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT)\]|<<\/?SYS>>|<\/?(?:start_of_turn|end_of_turn)>/gi,
    neutralise: (match) =>
      match.startsWith('[') ? `(${match.slice(1, -1)})` : escapeAngles(match),
  },
  {
    // Tags that open or close a tool result, a function call or a turn in XML-style prompts
    // (<tool_result>, </function_results>, <tool_description>, <system>, <IMPORTANT>, …).
    name: 'tool_tag',
    pattern:
      /<\/?\s*(?:antml:)?(?:(?:tool|function)[\w-]*|tools|invoke|parameter|system[\w-]*|assistant|user|human|developer|instructions?|important)\b[^<>]{0,200}>/gi,
    neutralise: escapeAngles,
  },
  {
    // A line that opens a fake turn: "System: ...", "### Assistant:", "\n\nHuman:" — also after
    // an escaped newline, as in JSON-serialised output ("...\\n\\nSystem: ...").
    name: 'turn_header',
    pattern: /(^|\\[nr])([ \t>#*_-]*)(system|assistant|developer|human)([ \t]*:)/gim,
    neutralise: (_match, newline = '', lead = '', role = '', colon = '') =>
      `${newline}${lead}[${role}]${colon}`,
  },
];
