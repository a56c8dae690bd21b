// Ottava's gophercloud package, for gophercloud v2 (context first), the version cloud-provider-openstack
// imports. The module is not published: take it with a replace directive or copy the package (see
// README.md). scripts/derive-v0.12.mjs derives the gophercloud 0.12 copy that CI builds and tests.
module ottava/clients/gophercloud

go 1.22

require github.com/gophercloud/gophercloud/v2 v2.12.0
