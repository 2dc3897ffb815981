// Public surface of the nodes module (under construction).
export {};
