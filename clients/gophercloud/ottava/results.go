package ottava

import "github.com/gophercloud/gophercloud/v2"

// ResizeResult represents the result of a Resize operation: 202 with no
// body. Call its ExtractErr method to determine if the request succeeded or
// failed.
type ResizeResult struct {
	gophercloud.ErrResult
}

// CancelResizeResult represents the result of a CancelResize operation: 202
// with no body. Call its ExtractErr method to determine if the request
// succeeded or failed.
type CancelResizeResult struct {
	gophercloud.ErrResult
}

// BatchUpdateAcrossPoolsResult represents the result of a
// BatchUpdateAcrossPools operation: 202 with no body. Call its ExtractErr
// method to determine if the request succeeded or failed.
type BatchUpdateAcrossPoolsResult struct {
	gophercloud.ErrResult
}
