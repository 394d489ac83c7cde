//go:build unix && !linux

package main

func fsType(string) string { return "filesystem" }
