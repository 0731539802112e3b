package testenv

import "time"

// SetQuietTimeout sets how long ExpectQuiet waits for the first quiet pass, and returns
// a function that restores the default.
func SetQuietTimeout(d time.Duration) (restore func()) {
	old := quietTimeout
	quietTimeout = d
	return func() { quietTimeout = old }
}

// SetConditionTimeout sets how long WaitForCondition waits at most, and returns a
// function that restores the default.
func SetConditionTimeout(d time.Duration) (restore func()) {
	old := conditionTimeout
	conditionTimeout = d
	return func() { conditionTimeout = old }
}
