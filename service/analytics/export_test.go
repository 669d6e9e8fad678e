package analytics

// HoldWriter makes the writer call f before each commit (a test holds
// it there to fill the queue).
func HoldWriter(s *Service, f func()) { s.beforeWrite = f }
