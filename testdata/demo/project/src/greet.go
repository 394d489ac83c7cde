package greet

// Hello returns a greeting in the given language (en, fr, de).
func Hello(lang string) string {
	switch lang {
	case "fr":
		return "Bonjour"
	case "de":
		return "Hallo"
	}
	return "Hello"
}
