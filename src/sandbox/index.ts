// Public surface of the sandbox module (under construction).
export {};
