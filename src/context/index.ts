// Public surface of the context module (under construction).
export {};
