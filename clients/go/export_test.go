package turnstile

import "time"

// The client's own constants, for the conformance driver (conformance_test.go), which compares
// them with the shared ones in test/conformance/constants.json.
const (
	AnswerGraceForTest       = answerGrace
	FirstBackoffForTest      = firstBackoff // resume
	MaxBackoffForTest        = maxBackoff
	FirstWatchBackoffForTest = firstWatchBackoff // Observe's watch again
	MaxWatchBackoffForTest   = maxWatchBackoff
)

// LeaseMarginForTest is the margin the lease clock subtracts from every deadline at ttl.
func LeaseMarginForTest(ttl time.Duration) time.Duration { return newLeaseClock(ttl).margin() }
