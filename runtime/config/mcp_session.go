package config

// CheckMCPServer validates s and fills its defaults the way a server of the
// config file is, for servers given elsewhere (an ACP client's session/new
// mcpServers). name names it in errors.
func CheckMCPServer(name string, s *MCPServer) error {
	return s.normalize(name, "", func(...string) bool { return false })
}
