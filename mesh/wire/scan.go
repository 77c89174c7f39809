package wire

// members calls fn with each key (still quoted) and raw value of a JSON
// object, in order. It expects input json.Valid already accepted, walks it
// without allocating, and reports false for anything that is not an
// object; it never reads past the end even on input it did not expect.
func members(raw []byte, fn func(key, val []byte)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			return true
		}
		kEnd := endOfString(raw, i)
		if kEnd < 0 {
			return false
		}
		key := raw[i:kEnd]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vEnd := endOfValue(raw, i)
		if vEnd < 0 {
			return false
		}
		fn(key, raw[i:vEnd])
		i = skipSpace(raw, vEnd)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i++
		case '}':
			return true
		default:
			return false
		}
	}
}

// elements calls fn with each raw element of a JSON array.
func elements(raw []byte, fn func(val []byte)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return false
		}
		if raw[i] == ']' {
			return true
		}
		vEnd := endOfValue(raw, i)
		if vEnd < 0 {
			return false
		}
		fn(raw[i:vEnd])
		i = skipSpace(raw, vEnd)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i++
		case ']':
			return true
		default:
			return false
		}
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index just past the string starting at i, or -1.
func endOfString(raw []byte, i int) int {
	if i >= len(raw) || raw[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// endOfValue returns the index just past the value starting at i, or -1.
func endOfValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return endOfString(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				e := endOfString(raw, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(raw) {
		switch raw[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
