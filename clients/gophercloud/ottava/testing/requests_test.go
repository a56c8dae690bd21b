package testing

import (
	"context"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	th "github.com/gophercloud/gophercloud/v2/testhelper"
	"github.com/gophercloud/gophercloud/v2/testhelper/client"

	"ottava/clients/gophercloud/ottava"
)

func ptr[T any](v T) *T { return &v }

// ExampleMembers are the members of MembersAcrossPoolsRequest.
var ExampleMembers = []ottava.AcrossPoolsMemberOpts{
	{PoolID: PoolA, Address: "192.0.2.16", ProtocolPort: 80, Name: ptr("web-0"), Weight: ptr(20), Tags: []string{"k8s"}},
	{PoolID: PoolA, Address: "192.0.2.17", ProtocolPort: 80, Backup: ptr(true), AdminStateUp: ptr(false)},
	{PoolID: PoolB, Address: "2001:db8::10", ProtocolPort: 443, MonitorAddress: ptr("2001:db8::11"), MonitorPort: ptr(8443), SubnetID: ptr("bbb35f84-35cc-4b2f-84c2-a6a29bba68aa")},
}

func TestResize(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleResizeSuccessfully(t, fakeServer)

	err := ottava.Resize(context.TODO(), client.ServiceClient(fakeServer), LoadBalancerID, ottava.ResizeOpts{NewFlavorID: FlavorID}).ExtractErr()
	th.AssertNoErr(t, err)
}

func TestResizeRequiresFlavor(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()

	err := ottava.Resize(context.TODO(), client.ServiceClient(fakeServer), LoadBalancerID, ottava.ResizeOpts{}).ExtractErr()
	if _, ok := err.(gophercloud.ErrMissingInput); !ok {
		t.Fatalf("expected ErrMissingInput, got %T %v", err, err)
	}
	_, isFault := ottava.ExtractFault(err)
	th.AssertEquals(t, false, isFault)
}

func TestResizeConflict(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleResizeConflict(t, fakeServer)

	err := ottava.Resize(context.TODO(), client.ServiceClient(fakeServer), LoadBalancerID, ottava.ResizeOpts{NewFlavorID: FlavorID}).ExtractErr()
	f, ok := ottava.ExtractFault(err)
	th.AssertEquals(t, true, ok)
	th.CheckDeepEquals(t, ottava.Fault{
		StatusCode:  http.StatusConflict,
		FaultCode:   "Client",
		FaultString: "Load Balancer " + LoadBalancerID + " is immutable and cannot be updated.",
	}, f)
}

func TestCancelResize(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleCancelResizeSuccessfully(t, fakeServer)

	err := ottava.CancelResize(context.TODO(), client.ServiceClient(fakeServer), LoadBalancerID).ExtractErr()
	th.AssertNoErr(t, err)
}

func TestCancelResizeConflict(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleCancelResizeConflict(t, fakeServer)

	err := ottava.CancelResize(context.TODO(), client.ServiceClient(fakeServer), LoadBalancerID).ExtractErr()
	f, ok := ottava.ExtractFault(err)
	th.AssertEquals(t, true, ok)
	th.AssertEquals(t, http.StatusConflict, f.StatusCode)
	th.AssertEquals(t, "Load Balancer "+LoadBalancerID+" has no resize in progress.", f.FaultString)
	th.AssertEquals(t, "409 Client: Load Balancer "+LoadBalancerID+" has no resize in progress.", f.Error())
}

func TestBatchUpdateAcrossPools(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleBatchUpdateAcrossPoolsSuccessfully(t, fakeServer, "")

	err := ottava.BatchUpdateAcrossPools(context.TODO(), client.ServiceClient(fakeServer), ottava.BatchUpdateAcrossPoolsOpts{Members: ExampleMembers}).ExtractErr()
	th.AssertNoErr(t, err)
}

func TestBatchUpdateAcrossPoolsAdditiveOnly(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()
	HandleBatchUpdateAcrossPoolsSuccessfully(t, fakeServer, "true")

	opts := ottava.BatchUpdateAcrossPoolsOpts{Members: ExampleMembers, AdditiveOnly: true}
	query, err := opts.ToMembersAcrossPoolsUpdateQuery()
	th.AssertNoErr(t, err)
	th.AssertEquals(t, "?additive_only=true", query)
	err = ottava.BatchUpdateAcrossPools(context.TODO(), client.ServiceClient(fakeServer), opts).ExtractErr()
	th.AssertNoErr(t, err)
}

func TestBatchUpdateAcrossPoolsRequiresMembers(t *testing.T) {
	_, err := ottava.BatchUpdateAcrossPoolsOpts{}.ToMembersAcrossPoolsUpdateMap()
	missing, ok := err.(gophercloud.ErrMissingInput)
	if !ok {
		t.Fatalf("expected ErrMissingInput, got %T %v", err, err)
	}
	th.AssertEquals(t, "Members", missing.Argument)
}

func TestBatchUpdateAcrossPoolsRequiresPool(t *testing.T) {
	fakeServer := th.SetupHTTP()
	defer fakeServer.Teardown()

	// No handler: a member without its pool must be refused before any request.
	opts := ottava.BatchUpdateAcrossPoolsOpts{Members: []ottava.AcrossPoolsMemberOpts{{Address: "192.0.2.16", ProtocolPort: 80}}}
	err := ottava.BatchUpdateAcrossPools(context.TODO(), client.ServiceClient(fakeServer), opts).ExtractErr()
	if _, ok := err.(gophercloud.ErrMissingInput); !ok {
		t.Fatalf("expected ErrMissingInput, got %T %v", err, err)
	}
}
