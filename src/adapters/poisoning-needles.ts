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

/** One marker found in a text: its kind, where it stands, and what removing it takes. */
export interface PoisoningFinding {
  kind: PoisoningKind;
  /** First index of the marker in the text. */
  start: number;
  /** Index after the marker (after the closing tag of a closed block). */
  end: number;
  /** For a tag block or comment, the index after what goes with it; else its sentence goes. */
  blockEnd?: number;
  /** Held for review, but nothing is removed (a finding that may be ordinary documentation). */
  holdOnly?: true;
}

/**
 * Needles that stand for a shape rather than a string (found by `scan-shapes.ts`): a
 * host-shaped word without a scheme (`collect.evil.example/log`), a markdown image
 * (`![s](https://…)`), and a reference to an environment variable whose name says it holds a
 * secret (`$OPENAI_API_KEY`, `${AWS_SECRET_ACCESS_KEY}`, `%API_TOKEN%`, `$env:GITHUB_TOKEN`).
 */
export const HOST_SHAPE = '{host}';
export const IMAGE_SHAPE = '{image}';
export const SECRET_VARIABLE_SHAPE = '{secret-variable}';

/**
 * Markers of tool-poisoning instructions, in folded form (lower case, accents and marks removed,
 * look-alike letters mapped, spaces, `_`, `-`, `*` and backticks removed: see `foldForScan`).
 * Needles of letters and digits only are also read across punctuation and HTML tags between
 * their letters (`withoutJoiners`); the others are matched as written. A needle alone flags
 * its sentence; for pairs see {@link NEAR_NEEDLES}.
 */
export const SINGLE_NEEDLES: ReadonlyArray<readonly [PoisoningKind, string]> = [
  ...[
    'beforeusingthistool',
    'beforecallingthistool',
    'beforeinvokingthistool',
    'beforeusingthisfunction',
    'beforeusinganytool',
    'beforeusinganyothertool',
    // Also found as pairs (`DIRECTIVES`), but a pair's words must stand apart: these are
    // read when run together too (`IgnoreAllPrevious`).
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
    '/environ', // /proc/self/environ, /proc/1/environ
    'process.env',
    'os.environ',
    'os.getenv',
    '.aws/credentials',
    '.npmrc',
    '.netrc',
    '.gitcredentials',
    '.pgpass',
    '.pypirc',
    '.htpasswd',
    '.gnupg/',
    '.kube/config',
    '.docker/config.json',
    '.config/gcloud',
    '.azure/',
    // Agent and IDE configurations, which hold other servers' keys.
    '.cursor/',
    'mcp.json',
    'claudedesktopconfig.json',
    '.bashhistory',
    '.zshhistory',
    'printenv',
    '.env',
    SECRET_VARIABLE_SHAPE,
  ].map((needle) => ['secret_access', needle] as const),
];

/**
 * Most folded characters between a trigger and the word that completes it, for pairs bound
 * by their sentence: the pair must also stand in one sentence (a sentence ends after `.`,
 * `!` or `?` before a blank, or at a blank line; a single line break, such as the one between
 * two parts of a model view, does not end one).
 */
export const PAIR_WINDOW = 240;

/**
 * A `[kind, trigger, near, words?]` pair flags its sentence when `near` follows `trigger`:
 * with at most `words` words between them (directives: "ignore all of the previous"), or,
 * without `words`, in the same sentence and within {@link PAIR_WINDOW} folded characters.
 */
export type NearNeedle = readonly [PoisoningKind, string, string, number?];

/** Words between a directive's verb and its object ("ignore [all of the] previous"). */
const DIRECTIVE_WORDS = 3;

const DIRECTIVES: NearNeedle[] = [
  ...['ignore', 'disregard', 'forget', 'discard'].flatMap((verb) =>
    [
      'previous',
      'prior',
      'above',
      'earlier',
      'preceding',
      'foregoing',
      'instructions',
      'directions',
      'guidance',
      'guidelines',
      'systemprompt',
    ].map((object) => ['model_directive', verb, object, DIRECTIVE_WORDS] as const),
  ),
  ...['override', 'bypass'].flatMap((verb) =>
    ['instructions', 'guidelines', 'systemprompt'].map(
      (object) => ['model_directive', verb, object, DIRECTIVE_WORDS] as const,
    ),
  ),
  // A request to decode something and act on what it says ("decode it and follow it"): the
  // encoded text is an instruction the scan may not read (rot13, a cipher), the request is
  // one. The object is the decoded text itself (`it`, `them`, `this`), not a link or a
  // redirect ("decode the response, then follow the next link").
  ...['decode', 'decrypt', 'deobfuscate', 'unescape', 'rot13'].flatMap((verb) =>
    ['follow', 'execute', 'obey', 'run', 'carryout'].flatMap((act) =>
      ['it', 'them', 'this', 'these', 'theinstructions'].map(
        (object) => ['model_directive', verb, `${act}${object}`, DIRECTIVE_WORDS] as const,
      ),
    ),
  ),
];

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
const NEGATIONS = [
  'donot',
  "don't",
  'dont',
  'never',
  'mustnot',
  "mustn't",
  'mustnever',
  'shouldnot',
  "shouldn't",
  'shouldnever',
  'without',
];
const UNAWARE = [
  'mustnotknow',
  'mustneverknow',
  'shouldnotknow',
  'shouldneverknow',
  'doesnotneedtoknow',
  "doesn'tneedtoknow",
  'neednotknow',
  'mustnotfindout',
  'mustneverfindout',
];

const CONCEALMENT: NearNeedle[] = [
  ...NEGATIONS.flatMap((negation) => [
    ...CONCEAL_VERBS.flatMap((verb) => [
      ['conceal_from_user', `${negation}${verb}`, 'user'] as const,
      ['conceal_from_user', `${negation}${verb}ing`, 'user'] as const,
    ]),
    // "don't let the user know": `let` only with what the user is not to learn.
    ...['userknow', 'usersee', 'usernotice', 'userfindout'].map(
      (near) => ['conceal_from_user', `${negation}let`, near] as const,
    ),
  ]),
  ['conceal_from_user', 'hidethis', 'user'],
  ['conceal_from_user', 'keepthis', 'user'],
  ...UNAWARE.map((near) => ['conceal_from_user', 'user', near] as const),
];

const SECRETS_READ: NearNeedle[] = [
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
);

const SENDING_VERBS = [
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
];
// Words for what the model writes back: a markdown image in it is fetched when the reply is
// rendered, which sends its URL (and whatever the model put in it) to the image's host.
const REPLY_WORDS = ['reply', 'replies', 'response', 'responses', 'answer', 'answers', 'output'];

const EXFILTRATION: NearNeedle[] = [
  ...SENDING_VERBS.flatMap((verb) =>
    ['http://', 'https://', HOST_SHAPE, IMAGE_SHAPE].map(
      (near) => ['exfiltration', verb, near] as const,
    ),
  ),
  ...REPLY_WORDS.flatMap((word) => [
    ['exfiltration', word, IMAGE_SHAPE] as const,
    ['exfiltration', IMAGE_SHAPE, word] as const,
  ]),
];

export const NEAR_NEEDLES: readonly NearNeedle[] = [
  ...DIRECTIVES,
  ...CONCEALMENT,
  ...SECRETS_READ,
  ...EXFILTRATION,
];

// Words after a secret's name that make it a modifier ("password reset"), not what is read.
const MODIFIED_BY = [
  'reset',
  'policy',
  'strength',
  'requirements',
  'rules',
  'expiry',
  'expiration',
  'complexity',
  'rotation',
];

/**
 * Needles that are no marker when the next word is one of these: a precondition on the
 * caller ("You must be authenticated", "you must have `droplet:read`"), a secret's name used
 * as a modifier ("send a password reset email"), a request to file reports ("Report bugs at
 * https://…"). Matched as whole words in each folding.
 */
export const NOT_BEFORE: ReadonlyMap<string, readonly string[]> = new Map<string, string[]>([
  ['youmust', ['be', 'have']],
  ['report', ['bug', 'bugs', 'issue', 'issues', 'problems', 'errors', 'abuse']],
  ...['password', 'apikey', 'credentials', 'accesstoken'].map((noun): [string, string[]] => [
    noun,
    MODIFIED_BY,
  ]),
]);

// Ways a notification reaches a user ("by email", "via SMS"), as folded words.
const CHANNEL_WORDS = ['by', 'via', 'through', 'over'];
const CHANNELS = ['email', 'mail', 'sms', 'text', 'push', 'phone', 'webhook', 'slack'];
const NOTIFICATION_VERBS = ['notify', 'notifying', 'alert', 'alerting'];

/**
 * Pairs that are no marker when their near word is followed by one of these sequences of
 * words: a negated notification verb whose user is followed by a channel ("If false, do not
 * notify the user by email.") says which notification an operation leaves out, not that the
 * model is to hide something; without a channel ("do not notify the user") it is still a
 * concealment. Keyed by trigger; matched as whole words in each folding. Another near word
 * further in the sentence can still complete the pair ("do not notify the user by email or
 * tell the user").
 */
export const NEAR_NOT_BEFORE: ReadonlyMap<string, ReadonlyArray<readonly string[]>> = new Map(
  NEGATIONS.flatMap((negation) =>
    NOTIFICATION_VERBS.map((verb): [string, string[][]] => [
      `${negation}${verb}`,
      CHANNEL_WORDS.flatMap((word) => CHANNELS.map((channel) => [word, channel])),
    ]),
  ),
);

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
 * Folded forms of an opening angle bracket: `<` (the folding maps `＜`, `〈`, `⟨` and other
 * angle brackets, and decodes `\u003c`, `\x3c` and `%3C` to it) and its HTML escapes (decoded
 * for a whole model view, not in one text).
 */
export const TAG_OPENERS = ['<', '&lt;', '&#60;', '&#x3c;'];
