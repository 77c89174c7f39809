// Package typo tells a mistyped name from the names it may have meant:
// the one edit distance every did-you-mean of cotal uses. It imports
// nothing of this module.
package typo

import (
	"slices"
	"strings"
)

// Distance is how many typos apart a and b are, ignoring case: the
// fewest single-character insertions, deletions, substitutions and swaps
// of two neighbours that turn one into the other (optimal string
// alignment, over runes).
func Distance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// rows i-2, i-1 and i of the table: d[i][j] is the distance of
	// ra[:i] and rb[:j].
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Close lists, sorted and once each, the names typed may have meant: at
// most within typos away, or (prefix) names it is the start of. The typed
// name itself is never listed.
func Close(typed string, names []string, within int, prefix bool) []string {
	var out []string
	for _, n := range names {
		if n == typed || slices.Contains(out, n) {
			continue
		}
		if Distance(typed, n) <= within || prefix && strings.HasPrefix(n, typed) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
