// ottava unit tests
package testing
