// Public surface of the treasury module (under construction).
export {};
