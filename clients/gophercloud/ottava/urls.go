package ottava

import "github.com/gophercloud/gophercloud/v2"

const (
	rootPath         = "lbaas"
	loadBalancerPath = "loadbalancers"
	resizePath       = "resize"
	poolsPath        = "pools"
	membersPath      = "members"
)

// resizeURL is /v2/lbaas/loadbalancers/{id}/resize.
func resizeURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL(rootPath, loadBalancerPath, id, resizePath)
}

// membersAcrossPoolsURL is /v2/lbaas/pools/members: no pool id in the path, every member names its pool.
func membersAcrossPoolsURL(c *gophercloud.ServiceClient) string {
	return c.ServiceURL(rootPath, poolsPath, membersPath)
}
