// Public surface of the testing module (under construction).
export {};
