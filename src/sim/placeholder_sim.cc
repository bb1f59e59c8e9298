// Placeholder so the target is never empty while the module is being written.
