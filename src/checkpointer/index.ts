// Public surface of the checkpointer module (under construction).
export {};
