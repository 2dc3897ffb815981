// Public surface of the adapters module (under construction).
export {};
