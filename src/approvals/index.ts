// Public surface of the approvals module (under construction).
export {};
