package ottava

// What differs between gophercloud v2 and 0.12 beyond the context parameter:
// scripts/derive-v0.12.mjs replaces this file with its 0.12 version.

import (
	"errors"

	"github.com/gophercloud/gophercloud/v2"
)

// responseError finds the unexpected-status error in err: gophercloud v2
// returns an ErrUnexpectedResponseCode (perhaps wrapped) for every status.
func responseError(err error) (status int, body []byte, ok bool) {
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) {
		return 0, nil, false
	}
	return e.Actual, e.Body, true
}
