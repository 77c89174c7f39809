package broker

// SetTestHookBeforePurge runs f between ClearHistory's count and purge.
func SetTestHookBeforePurge(f func()) { testHookBeforePurge = f }
