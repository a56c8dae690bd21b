package ottava

import (
	"encoding/json"
	"fmt"
)

// Fault is the error the API answered: its HTTP status and the body Octavia
// answers every error with, {"faultcode", "faultstring", "debuginfo"}.
// docs/api-compatibility.md lists each operation's codes and fault strings.
type Fault struct {
	// StatusCode is the HTTP status: 400, 401, 403, 404, 409, 413, 500, 503.
	StatusCode int `json:"-"`

	// FaultCode is "Client" for a 4xx and "Server" for a 5xx.
	FaultCode string `json:"faultcode"`

	// FaultString says what was refused, e.g. "Load Balancer <id> is
	// immutable and cannot be updated."
	FaultString string `json:"faultstring"`

	// DebugInfo is null unless the service runs with debug on.
	DebugInfo *string `json:"debuginfo"`
}

func (f Fault) Error() string {
	return fmt.Sprintf("%d %s: %s", f.StatusCode, f.FaultCode, f.FaultString)
}

// ExtractFault returns the Fault of an error that a request of this package
// (or any gophercloud request to the load-balancer API) returned because the
// API answered an unexpected status. ok is false for any other error: a
// connection failure, or an Opts builder's ErrMissingInput. A body that is not
// a fault leaves FaultCode and FaultString empty.
//
//	err := ottava.CancelResize(ctx, client, lbID).ExtractErr()
//	if f, ok := ottava.ExtractFault(err); ok && f.StatusCode == http.StatusConflict {
//		// no resize runs, or it has committed: f.FaultString says which
//	}
func ExtractFault(err error) (f Fault, ok bool) {
	status, body, ok := responseError(err)
	if !ok {
		return Fault{}, false
	}
	_ = json.Unmarshal(body, &f)
	f.StatusCode = status
	return f, true
}
