// Package root has no identifiers.
package root
