package proto

// KeptSchemaBytes is how many document bytes CompileSchema keeps now.
func KeptSchemaBytes() int {
	compiled.mu.Lock()
	defer compiled.mu.Unlock()
	return compiled.bytes
}

// KeptSchemaLimit is the most document bytes CompileSchema keeps.
const KeptSchemaLimit = compiledBytes
