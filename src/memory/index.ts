// Public surface of the memory module (under construction).
export {};
