package ottava

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
)

// ResizeOptsBuilder allows extensions to add additional parameters to the
// Resize request.
type ResizeOptsBuilder interface {
	ToLoadBalancerResizeMap() (map[string]any, error)
}

// ResizeOpts is the common options struct used in this package's Resize
// operation.
type ResizeOpts struct {
	// NewFlavorID is the ID of the flavor to resize the load balancer to. It must
	// be enabled, of the load balancer's provider, and have the load balancer's
	// topology.
	NewFlavorID string `json:"new_flavor_id" required:"true"`
}

// ToLoadBalancerResizeMap builds a request body from ResizeOpts. The body is
// not wrapped in a root key: {"new_flavor_id": "..."}.
func (opts ResizeOpts) ToLoadBalancerResizeMap() (map[string]any, error) {
	return gophercloud.BuildRequestBody(opts, "")
}

// Resize starts the resize of a load balancer onto another flavor: a
// failover of each of its amphorae onto the new flavor's compute flavor. The
// load balancer goes PENDING_UPDATE; poll it until it is ACTIVE again (its
// flavor_id is then the new flavor) or ERROR (the resize failed before it
// committed, and the load balancer kept its old flavor).
func Resize(ctx context.Context, c *gophercloud.ServiceClient, id string, opts ResizeOptsBuilder) (r ResizeResult) {
	b, err := opts.ToLoadBalancerResizeMap()
	if err != nil {
		r.Err = err
		return
	}
	resp, err := c.Put(ctx, resizeURL(c, id), b, nil, &gophercloud.RequestOpts{
		OkCodes: []int{202},
	})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	return
}

// CancelResize asks the running resize of a load balancer to roll back. It
// answers once the request is recorded; the resize then removes the amphorae
// it built and the load balancer ends ACTIVE on its old flavor. A resize that
// has committed can no longer be cancelled (409).
func CancelResize(ctx context.Context, c *gophercloud.ServiceClient, id string) (r CancelResizeResult) {
	resp, err := c.Delete(ctx, resizeURL(c, id), &gophercloud.RequestOpts{
		OkCodes: []int{202},
	})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	return
}

// BatchUpdateAcrossPoolsOptsBuilder allows extensions to add additional
// parameters to the BatchUpdateAcrossPools request.
type BatchUpdateAcrossPoolsOptsBuilder interface {
	ToMembersAcrossPoolsUpdateMap() (map[string]any, error)
	ToMembersAcrossPoolsUpdateQuery() (string, error)
}

// AcrossPoolsMemberOpts is one member of a BatchUpdateAcrossPools request: a
// member of the single-pool batch update (pools.BatchUpdateMemberOpts) that
// names its pool. Members are matched on pool, address and port.
type AcrossPoolsMemberOpts struct {
	// The ID of the pool the member belongs to.
	PoolID string `json:"pool_id" required:"true"`

	// The IP address of the member to receive traffic from the load balancer.
	Address string `json:"address" required:"true"`

	// The port on which to listen for client traffic.
	ProtocolPort int `json:"protocol_port" required:"true"`

	// Name of the Member.
	Name *string `json:"name,omitempty"`

	// ProjectID is the UUID of the project who owns the Member.
	// Deprecated: the member belongs to its load balancer's project.
	ProjectID string `json:"project_id,omitempty"`

	// A positive integer value that indicates the relative portion of traffic
	// that this member should receive from the pool.
	Weight *int `json:"weight,omitempty"`

	// If you omit this parameter, the load balancer's vip_subnet_id is used.
	SubnetID *string `json:"subnet_id,omitempty"`

	// The administrative state of the member. A valid value is true (UP)
	// or false (DOWN).
	AdminStateUp *bool `json:"admin_state_up,omitempty"`

	// Is the member a backup? Backup members only receive traffic when all
	// non-backup members are down.
	Backup *bool `json:"backup,omitempty"`

	// An alternate IP address and port used for health monitoring a backend member.
	MonitorAddress *string `json:"monitor_address,omitempty"`
	MonitorPort    *int    `json:"monitor_port,omitempty"`

	// Tags is a set of resource tags.
	Tags []string `json:"tags,omitempty"`

	// RequestSRIOV asks for an SR-IOV port for a new member (API v2.30); the
	// load balancer's flavor must allow it.
	RequestSRIOV bool `json:"request_sriov,omitempty"`
}

// BatchUpdateAcrossPoolsOpts is the common options struct used in this
// package's BatchUpdateAcrossPools operation.
type BatchUpdateAcrossPoolsOpts struct {
	// Members is the new member set of every pool it names. All those pools
	// must belong to the same load balancer; pools it does not name are left
	// alone.
	Members []AcrossPoolsMemberOpts `json:"members"`

	// AdditiveOnly keeps the members of the named pools that Members leaves
	// out, which are otherwise deleted.
	AdditiveOnly bool `json:"-" q:"additive_only"`
}

// ToMembersAcrossPoolsUpdateMap builds a request body from
// BatchUpdateAcrossPoolsOpts: {"members": [...]}. An empty Members, which the
// API refuses, is an ErrMissingInput; so is a member without its pool,
// address or port.
func (opts BatchUpdateAcrossPoolsOpts) ToMembersAcrossPoolsUpdateMap() (map[string]any, error) {
	if len(opts.Members) == 0 {
		return nil, gophercloud.ErrMissingInput{Argument: "Members"}
	}
	members := make([]map[string]any, 0, len(opts.Members))
	for _, m := range opts.Members {
		b, err := gophercloud.BuildRequestBody(m, "")
		if err != nil {
			return nil, err
		}
		members = append(members, b)
	}
	return map[string]any{"members": members}, nil
}

// ToMembersAcrossPoolsUpdateQuery formats the query of a
// BatchUpdateAcrossPoolsOpts: ?additive_only=true, or nothing.
func (opts BatchUpdateAcrossPoolsOpts) ToMembersAcrossPoolsUpdateQuery() (string, error) {
	q, err := gophercloud.BuildQueryString(opts)
	if err != nil {
		return "", err
	}
	return q.String(), nil
}

// BatchUpdateAcrossPools replaces the member sets of several pools of one
// load balancer in one request (PUT /v2/lbaas/pools/members): one lock of the
// load balancer and one provisioning, all or nothing. The load balancer goes
// PENDING_UPDATE; poll it until it is ACTIVE again.
func BatchUpdateAcrossPools(ctx context.Context, c *gophercloud.ServiceClient, opts BatchUpdateAcrossPoolsOptsBuilder) (r BatchUpdateAcrossPoolsResult) {
	b, err := opts.ToMembersAcrossPoolsUpdateMap()
	if err != nil {
		r.Err = err
		return
	}
	query, err := opts.ToMembersAcrossPoolsUpdateQuery()
	if err != nil {
		r.Err = err
		return
	}
	resp, err := c.Put(ctx, membersAcrossPoolsURL(c)+query, b, nil, &gophercloud.RequestOpts{
		OkCodes: []int{202},
	})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	return
}
