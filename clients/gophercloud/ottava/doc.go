/*
Package ottava provides the load-balancer API calls that Ottava serves beyond
Octavia's: the load-balancer resize (PUT and DELETE
/v2/lbaas/loadbalancers/{id}/resize) and the member update across pools (PUT
/v2/lbaas/pools/members). Use it with the load-balancer service client that
gophercloud's loadbalancer/v2 packages take (openstack.NewLoadBalancerV2).

Each call answers 202 with no body once the change has started: the load
balancer is then PENDING_UPDATE; poll it with loadbalancers.Get until it is
ACTIVE again, as after any other change. An error the API answered is read
with ExtractFault; docs/api-compatibility.md lists every status and fault
string.

Example to Resize a Load Balancer

	lbID := "36e08a3e-a78f-4b40-a229-1e7e23eee1ab"
	resizeOpts := ottava.ResizeOpts{
		NewFlavorID: "6d425a5e-429f-4848-b240-ab31c6d211e4",
	}

	err := ottava.Resize(context.TODO(), lbClient, lbID, resizeOpts).ExtractErr()
	if err != nil {
		panic(err)
	}

Example to Cancel a Resize

	lbID := "36e08a3e-a78f-4b40-a229-1e7e23eee1ab"

	err := ottava.CancelResize(context.TODO(), lbClient, lbID).ExtractErr()
	if f, ok := ottava.ExtractFault(err); ok && f.StatusCode == http.StatusConflict {
		// No resize runs, or it has committed: f.FaultString says which.
	} else if err != nil {
		panic(err)
	}

Example to Update Members Across Pools

	weight := 5
	updateOpts := ottava.BatchUpdateAcrossPoolsOpts{
		Members: []ottava.AcrossPoolsMemberOpts{
			{PoolID: "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a01", Address: "192.0.2.16", ProtocolPort: 30080, Weight: &weight},
			{PoolID: "e3ab2cde-8b21-4b8b-8b91-2c2a3b7e2a02", Address: "192.0.2.16", ProtocolPort: 30443},
		},
		// Without it, the members of those two pools not listed are deleted.
		AdditiveOnly: false,
	}

	err := ottava.BatchUpdateAcrossPools(context.TODO(), lbClient, updateOpts).ExtractErr()
	if err != nil {
		panic(err)
	}
*/
package ottava
