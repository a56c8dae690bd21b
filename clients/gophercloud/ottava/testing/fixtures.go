package testing

import (
	"fmt"
	"net/http"
	"testing"

	th "github.com/gophercloud/gophercloud/v2/testhelper"
	"github.com/gophercloud/gophercloud/v2/testhelper/client"
)

const (
	LoadBalancerID = "36e08a3e-a78f-4b40-a229-1e7e23eee1ab"
	FlavorID       = "6d425a5e-429f-4848-b240-ab31c6d211e4"
	PoolA          = "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a01"
	PoolB          = "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a02"
)

// ResizeRequest is the body Resize sends.
const ResizeRequest = `{"new_flavor_id": "6d425a5e-429f-4848-b240-ab31c6d211e4"}`

// MembersAcrossPoolsRequest is the body BatchUpdateAcrossPools sends for
// ExampleMembers: only the fields set, each member with its pool.
const MembersAcrossPoolsRequest = `
{
  "members": [
    {"pool_id": "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a01", "address": "192.0.2.16", "protocol_port": 80, "name": "web-0", "weight": 20, "tags": ["k8s"]},
    {"pool_id": "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a01", "address": "192.0.2.17", "protocol_port": 80, "backup": true, "admin_state_up": false},
    {"pool_id": "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a02", "address": "2001:db8::10", "protocol_port": 443, "monitor_address": "2001:db8::11", "monitor_port": 8443, "subnet_id": "bbb35f84-35cc-4b2f-84c2-a6a29bba68aa"}
  ]
}
`

// ImmutableFault is the API's 409 while the load balancer is PENDING_*.
const ImmutableFault = `{"faultcode": "Client", "faultstring": "Load Balancer 36e08a3e-a78f-4b40-a229-1e7e23eee1ab is immutable and cannot be updated.", "debuginfo": null}`

// NoResizeFault is the API's 409 to a cancel when no resize runs.
const NoResizeFault = `{"faultcode": "Client", "faultstring": "Load Balancer 36e08a3e-a78f-4b40-a229-1e7e23eee1ab has no resize in progress.", "debuginfo": null}`

// HandleResizeSuccessfully sets up the test server to answer a Resize with 202.
func HandleResizeSuccessfully(t *testing.T, fakeServer th.FakeServer) {
	fakeServer.Mux.HandleFunc("/lbaas/loadbalancers/"+LoadBalancerID+"/resize", func(w http.ResponseWriter, r *http.Request) {
		th.TestMethod(t, r, "PUT")
		th.TestHeader(t, r, "X-Auth-Token", client.TokenID)
		th.TestJSONRequest(t, r, ResizeRequest)
		w.WriteHeader(http.StatusAccepted)
	})
}

// HandleResizeConflict sets up the test server to refuse a Resize with 409.
func HandleResizeConflict(t *testing.T, fakeServer th.FakeServer) {
	fakeServer.Mux.HandleFunc("/lbaas/loadbalancers/"+LoadBalancerID+"/resize", func(w http.ResponseWriter, r *http.Request) {
		th.TestMethod(t, r, "PUT")
		w.Header().Add("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, ImmutableFault)
	})
}

// HandleCancelResizeSuccessfully sets up the test server to answer a
// CancelResize with 202.
func HandleCancelResizeSuccessfully(t *testing.T, fakeServer th.FakeServer) {
	fakeServer.Mux.HandleFunc("/lbaas/loadbalancers/"+LoadBalancerID+"/resize", func(w http.ResponseWriter, r *http.Request) {
		th.TestMethod(t, r, "DELETE")
		th.TestHeader(t, r, "X-Auth-Token", client.TokenID)
		w.WriteHeader(http.StatusAccepted)
	})
}

// HandleCancelResizeConflict sets up the test server to refuse a
// CancelResize with 409.
func HandleCancelResizeConflict(t *testing.T, fakeServer th.FakeServer) {
	fakeServer.Mux.HandleFunc("/lbaas/loadbalancers/"+LoadBalancerID+"/resize", func(w http.ResponseWriter, r *http.Request) {
		th.TestMethod(t, r, "DELETE")
		w.Header().Add("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, NoResizeFault)
	})
}

// HandleBatchUpdateAcrossPoolsSuccessfully sets up the test server to answer
// a BatchUpdateAcrossPools with 202, checking the body and additive_only.
func HandleBatchUpdateAcrossPoolsSuccessfully(t *testing.T, fakeServer th.FakeServer, additiveOnly string) {
	fakeServer.Mux.HandleFunc("/lbaas/pools/members", func(w http.ResponseWriter, r *http.Request) {
		th.TestMethod(t, r, "PUT")
		th.TestHeader(t, r, "X-Auth-Token", client.TokenID)
		th.AssertEquals(t, additiveOnly, r.URL.Query().Get("additive_only"))
		th.TestJSONRequest(t, r, MembersAcrossPoolsRequest)
		w.WriteHeader(http.StatusAccepted)
	})
}
