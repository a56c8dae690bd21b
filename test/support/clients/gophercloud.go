// The calls the Kubernetes cloud provider and the Terraform provider make through gophercloud (Debian's
// golang-github-gophercloud-gophercloud-dev, 0.12), against Ottava at os.Args[1] under noauth: create a
// load balancer with a listener, a pool and a health monitor, wait for each to settle, then find them
// again through the list filters those callers use. Prints one JSON object; exits non-zero on an error.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/l7policies"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/openstack/loadbalancer/v2/pools"
)

func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

// waitActive polls the load balancer as the providers do until it is ACTIVE again.
func waitActive(c *gophercloud.ServiceClient, id string) {
	for i := 0; i < 400; i++ {
		lb, err := loadbalancers.Get(c, id).Extract()
		check(err, "get load balancer")
		if lb.ProvisioningStatus == "ACTIVE" {
			return
		}
		if lb.ProvisioningStatus == "ERROR" {
			check(fmt.Errorf("load balancer %s in ERROR", id), "wait")
		}
		time.Sleep(50 * time.Millisecond)
	}
	check(fmt.Errorf("load balancer %s not ACTIVE", id), "wait")
}

func main() {
	endpoint := strings.TrimSuffix(os.Args[1], "/") + "/"
	// As openstack.NewLoadBalancerV2 builds it from the catalog: every path under /v2.0/.
	c := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: 30 * time.Second}},
		Endpoint:       endpoint,
		ResourceBase:   endpoint + "v2.0/",
	}
	lb, err := loadbalancers.Create(c, loadbalancers.CreateOpts{Name: "k8s-lb", VipSubnetID: os.Args[2], ProjectID: os.Args[3]}).Extract()
	check(err, "create load balancer")
	waitActive(c, lb.ID)
	l, err := listeners.Create(c, listeners.CreateOpts{Name: "k8s-listener", LoadbalancerID: lb.ID, Protocol: listeners.ProtocolHTTP, ProtocolPort: 80}).Extract()
	check(err, "create listener")
	waitActive(c, lb.ID)
	p, err := pools.Create(c, pools.CreateOpts{Name: "k8s-pool", ListenerID: l.ID, Protocol: pools.ProtocolHTTP, LBMethod: pools.LBMethodRoundRobin}).Extract()
	check(err, "create pool")
	waitActive(c, lb.ID)
	m, err := monitors.Create(c, monitors.CreateOpts{Name: "k8s-monitor", PoolID: p.ID, Type: monitors.TypeHTTP, Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
	check(err, "create monitor")
	waitActive(c, lb.ID)
	pol, err := l7policies.Create(c, l7policies.CreateOpts{Name: "k8s-policy", ListenerID: l.ID, Action: l7policies.ActionReject}).Extract()
	check(err, "create l7 policy")
	waitActive(c, lb.ID)
	_, err = l7policies.CreateRule(c, pol.ID, l7policies.CreateRuleOpts{RuleType: l7policies.TypePath, CompareType: l7policies.CompareTypeStartWith, Value: "/k8s"}).Extract()
	check(err, "create l7 rule")
	waitActive(c, lb.ID)

	found := map[string][]string{}
	pages, err := monitors.List(c, monitors.ListOpts{PoolID: p.ID}).AllPages()
	check(err, "list monitors by pool_id")
	ms, err := monitors.ExtractMonitors(pages)
	check(err, "extract monitors")
	for _, x := range ms {
		found["monitors?pool_id"] = append(found["monitors?pool_id"], x.ID)
	}
	pages, err = listeners.List(c, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages()
	check(err, "list listeners by loadbalancer_id")
	ls, err := listeners.ExtractListeners(pages)
	check(err, "extract listeners")
	for _, x := range ls {
		found["listeners?loadbalancer_id"] = append(found["listeners?loadbalancer_id"], x.ID)
	}
	pages, err = pools.List(c, pools.ListOpts{LoadbalancerID: lb.ID}).AllPages()
	check(err, "list pools by loadbalancer_id")
	ps, err := pools.ExtractPools(pages)
	check(err, "extract pools")
	for _, x := range ps {
		found["pools?loadbalancer_id"] = append(found["pools?loadbalancer_id"], x.ID)
	}
	pages, err = l7policies.List(c, l7policies.ListOpts{ListenerID: l.ID}).AllPages()
	check(err, "list l7 policies by listener_id")
	pols, err := l7policies.ExtractL7Policies(pages)
	check(err, "extract l7 policies")
	for _, x := range pols {
		found["l7policies?listener_id"] = append(found["l7policies?listener_id"], x.ID)
	}
	pages, err = l7policies.ListRules(c, pol.ID, l7policies.ListRulesOpts{RuleType: l7policies.TypePath}).AllPages()
	check(err, "list l7 rules by type")
	rs, err := l7policies.ExtractRules(pages)
	check(err, "extract l7 rules")
	for _, x := range rs {
		found["rules?type"] = append(found["rules?type"], x.ID)
	}
	out, _ := json.Marshal(map[string]interface{}{
		"loadbalancer": lb.ID, "listener": l.ID, "pool": p.ID, "monitor": m.ID, "l7policy": pol.ID, "found": found,
	})
	fmt.Println(string(out))
}
