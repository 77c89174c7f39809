package ep

// Exported for the external tests only.
var (
	SnapshotRegistrations = snapshotRegistrations
	LastEntries           = lastEntries
	ErrNoDirectGet        = errNoDirectGet
	ReadAll               = readAll
	ReadStatus            = readStatus
	ReadRevisions         = readRevisions
	LastSpecSeq           = lastSpecSeq
)
