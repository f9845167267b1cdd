package preflight

// ListChangedNotifications exposes, to the package's external tests only,
// how many notifications/tools/list_changed a Transport saw: a count the
// capture keeps for its own use, which no user of the package needs.
func ListChangedNotifications(t *Transport) int { return t.listChangedNotifications() }
