/** What a tool-poisoning finding is about (never the removed text itself). */
export type PoisoningKind =
  | 'hidden_tag'
  | 'conceal_from_user'
  | 'secret_access'
  | 'exfiltration'
  | 'model_directive'
  /** Invisible characters, controls or terminal escapes in a schema string (removed). */
  | 'invisible_text'
  /** A chat-template or role token in a schema string (neutralised). */
  | 'role_token';

/**
 * Markers of tool-poisoning instructions, in folded form (lower case, accents and marks removed,
 * look-alike letters mapped, spaces, `_`, `-`, `*` and backticks removed: see `foldForScan`).
 * Needles of letters and digits only are also read across punctuation and HTML tags between
 * their letters (`withoutJoiners`); the others are matched as written. A needle alone
 * flags its sentence; a `[trigger, near]` pair flags it when `near` follows `trigger` within
 * {@link NEAR_WINDOW} folded characters.
 */
export const SINGLE_NEEDLES: ReadonlyArray<readonly [PoisoningKind, string]> = [
  ...[
    'beforeusingthistool',
    'beforecallingthistool',
    'beforeinvokingthistool',
    'beforeusingthisfunction',
    'beforeusinganytool',
    'beforeusinganyothertool',
    'ignorepreviousinstructions',
    'ignoreallpreviousinstructions',
    'ignoreallprevious',
    'ignoreprevious',
    'ignoreprior',
    'ignoretheabove',
    'ignoreallinstructions',
    'disregardprevious',
    'disregardallprevious',
    'disregardtheabove',
    'forgetallprevious',
    'forgetpreviousinstructions',
    'forgetyourinstructions',
    'youmust',
    'newinstructions:',
    'systemprompt',
    'callthistoolfirst',
    'insteadoftheuser',
  ].map((needle) => ['model_directive', needle] as const),
  ...[
    '~/.ssh',
    '.ssh/',
    'idrsa',
    'ided25519',
    'idecdsa',
    '/etc/passwd',
    '/etc/shadow',
    'process.env',
    'os.environ',
    '.aws/credentials',
    '.npmrc',
    '.netrc',
    '.gitcredentials',
    'printenv',
    '.env',
  ].map((needle) => ['secret_access', needle] as const),
];

/** Folded characters between a trigger and the word that completes it. */
export const NEAR_WINDOW = 80;

const CONCEAL_VERBS = [
  'tell',
  'mention',
  'inform',
  'reveal',
  'disclose',
  'show',
  'notify',
  'alert',
  'say',
];
const NEGATIONS = ['donot', "don't", 'dont', 'never', 'mustnot', 'shouldnot', 'without'];

export const NEAR_NEEDLES: ReadonlyArray<readonly [PoisoningKind, string, string]> = [
  ...NEGATIONS.flatMap((negation) =>
    CONCEAL_VERBS.flatMap((verb) => [
      ['conceal_from_user', `${negation}${verb}`, 'user'] as const,
      ['conceal_from_user', `${negation}${verb}ing`, 'user'] as const,
    ]),
  ),
  ['conceal_from_user', 'hidethis', 'user'],
  ['conceal_from_user', 'keepthis', 'user'],
  ['conceal_from_user', 'user', 'mustnotknow'],
  ['conceal_from_user', 'user', 'shouldnotknow'],
  ['conceal_from_user', 'user', 'doesnotneedtoknow'],
  ...[
    'read',
    'cat',
    'reveal',
    'leak',
    'send',
    'upload',
    'share',
    'copy',
    'dump',
    'print',
    'exfiltrate',
    'email',
  ].flatMap((verb) =>
    [
      'apikey',
      'secretkey',
      'privatekey',
      'sshkey',
      'accesstoken',
      'password',
      'credentials',
      'environmentvariables',
      'envvars',
    ].map((noun) => ['secret_access', verb, noun] as const),
  ),
  ...[
    'send',
    'post',
    'upload',
    'forward',
    'transmit',
    'exfiltrate',
    'submit',
    'leak',
    'email',
    'report',
  ].flatMap((verb) => [
    ['exfiltration', verb, 'http://'] as const,
    ['exfiltration', verb, 'https://'] as const,
  ]),
];

/** Tags that open a block addressed to the model (`<IMPORTANT>…</IMPORTANT>`). */
export const HIDDEN_TAGS = [
  'important',
  'system',
  'systemprompt',
  'instructions',
  'instruction',
  'secret',
  'hidden',
  'admin',
  'critical',
  'override',
  'sudo',
  'developer',
  'assistant',
];

/**
 * Folded forms of an opening angle bracket: `<` (the folding maps `＜` and decodes `\u003c`,
 * `\x3c` and `%3C` to it) and its HTML escapes (decoded for a whole model view, not in one text).
 */
export const TAG_OPENERS = ['<', '&lt;', '&#60;', '&#x3c;'];
