// Ottava's gophercloud package (clients/gophercloud/ottava, as scripts/derive-v0.12.mjs derives it for
// Debian's gophercloud 0.12) against Ottava at os.Args[1] under noauth, as cloud-provider-openstack
// would call it: resize a load balancer by flavor id (os.Args[4] → os.Args[5]) and wait, start a resize
// back and cancel it, then replace the members of three pools with BatchUpdateAcrossPools. Prints one
// JSON object of what it saw; exits non-zero on an unexpected error.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/pools"

	"ottava/clients/gophercloud/ottava"
)

func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

// waitActive polls the load balancer until it is ACTIVE again and answers it.
func waitActive(c *gophercloud.ServiceClient, id string) *loadbalancers.LoadBalancer {
	for i := 0; i < 600; i++ {
		lb, err := loadbalancers.Get(c, id).Extract()
		check(err, "get load balancer")
		if lb.ProvisioningStatus == "ACTIVE" {
			return lb
		}
		if lb.ProvisioningStatus == "ERROR" {
			check(fmt.Errorf("load balancer %s in ERROR", id), "wait")
		}
		time.Sleep(50 * time.Millisecond)
	}
	check(fmt.Errorf("load balancer %s not ACTIVE", id), "wait")
	return nil
}

// fault answers the status and faultstring of an error the API answered.
func fault(err error) string {
	f, ok := ottava.ExtractFault(err)
	if !ok {
		return fmt.Sprintf("not a fault: %v", err)
	}
	return fmt.Sprintf("%d %s", f.StatusCode, f.FaultString)
}

func intp(v int) *int { return &v }

func main() {
	endpoint := strings.TrimSuffix(os.Args[1], "/") + "/"
	subnet, project, small, large := os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	c := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: 30 * time.Second}},
		Endpoint:       endpoint,
		ResourceBase:   endpoint + "v2.0/",
	}
	out := map[string]interface{}{}

	lb, err := loadbalancers.Create(c, loadbalancers.CreateOpts{Name: "k8s-resize", VipSubnetID: subnet, ProjectID: project, FlavorID: small}).Extract()
	check(err, "create load balancer")
	out["loadbalancer"] = lb.ID
	waitActive(c, lb.ID)

	// Resize by flavor id, and wait for it.
	check(ottava.Resize(c, lb.ID, ottava.ResizeOpts{NewFlavorID: large}).ExtractErr(), "resize")
	out["resized_flavor"] = waitActive(c, lb.ID).FlavorID

	// Resize back, and cancel it while the new amphora is being built.
	check(ottava.Resize(c, lb.ID, ottava.ResizeOpts{NewFlavorID: small}).ExtractErr(), "resize back")
	out["resize_while_pending"] = fault(ottava.Resize(c, lb.ID, ottava.ResizeOpts{NewFlavorID: small}).ExtractErr())
	check(ottava.CancelResize(c, lb.ID).ExtractErr(), "cancel resize")
	out["cancelled_flavor"] = waitActive(c, lb.ID).FlavorID
	out["cancel_when_idle"] = fault(ottava.CancelResize(c, lb.ID).ExtractErr())
	_, isFault := ottava.ExtractFault(ottava.Resize(c, lb.ID, ottava.ResizeOpts{}).ExtractErr())
	out["resize_without_flavor_is_fault"] = isFault

	// Three pools, then their members in one request; then another that changes, adds and removes
	// members across them and leaves the third pool alone.
	var ids []string
	for _, name := range []string{"k8s-80", "k8s-443", "k8s-8080"} {
		p, err := pools.Create(c, pools.CreateOpts{Name: name, LoadbalancerID: lb.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
		check(err, "create pool")
		ids = append(ids, p.ID)
		waitActive(c, lb.ID)
	}
	a, b, p3 := ids[0], ids[1], ids[2]
	check(ottava.BatchUpdateAcrossPools(c, ottava.BatchUpdateAcrossPoolsOpts{Members: []ottava.AcrossPoolsMemberOpts{
		{PoolID: a, Address: "192.0.2.1", ProtocolPort: 30080},
		{PoolID: a, Address: "192.0.2.2", ProtocolPort: 30080},
		{PoolID: b, Address: "192.0.2.1", ProtocolPort: 30443},
		{PoolID: p3, Address: "192.0.2.1", ProtocolPort: 30808},
	}}).ExtractErr(), "cross-pool update: create")
	waitActive(c, lb.ID)
	check(ottava.BatchUpdateAcrossPools(c, ottava.BatchUpdateAcrossPoolsOpts{Members: []ottava.AcrossPoolsMemberOpts{
		{PoolID: a, Address: "192.0.2.1", ProtocolPort: 30080, Weight: intp(5)},
		{PoolID: b, Address: "192.0.2.1", ProtocolPort: 30443},
		{PoolID: b, Address: "192.0.2.3", ProtocolPort: 30443},
	}}).ExtractErr(), "cross-pool update: change")
	waitActive(c, lb.ID)
	check(ottava.BatchUpdateAcrossPools(c, ottava.BatchUpdateAcrossPoolsOpts{AdditiveOnly: true, Members: []ottava.AcrossPoolsMemberOpts{
		{PoolID: p3, Address: "192.0.2.4", ProtocolPort: 30808},
	}}).ExtractErr(), "cross-pool update: additive only")
	waitActive(c, lb.ID)
	out["unknown_pool"] = fault(ottava.BatchUpdateAcrossPools(c, ottava.BatchUpdateAcrossPoolsOpts{Members: []ottava.AcrossPoolsMemberOpts{
		{PoolID: lb.ID, Address: "192.0.2.9", ProtocolPort: 80},
	}}).ExtractErr())
	err = ottava.BatchUpdateAcrossPools(c, ottava.BatchUpdateAcrossPoolsOpts{Members: []ottava.AcrossPoolsMemberOpts{{Address: "192.0.2.9", ProtocolPort: 80}}}).ExtractErr()
	_, isMissing := err.(gophercloud.ErrMissingInput)
	out["member_without_pool_is_missing_input"] = isMissing

	// Each pool's members as "address:port weight".
	members := map[string][]string{}
	for i, id := range ids {
		pages, err := pools.ListMembers(c, id, pools.ListMembersOpts{}).AllPages()
		check(err, "list members")
		ms, err := pools.ExtractMembers(pages)
		check(err, "extract members")
		got := []string{}
		for _, m := range ms {
			got = append(got, fmt.Sprintf("%s:%d %d", m.Address, m.ProtocolPort, m.Weight))
		}
		sort.Strings(got)
		members[fmt.Sprint(i)] = got
	}
	out["members"] = members
	j, _ := json.Marshal(out)
	fmt.Println(string(j))
}
