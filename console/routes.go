package console

import "net/http"

// routes is the console's route table: every page and form, in one place.
func (c *Console) routes() {
	m := c.mux
	// Account
	m.HandleFunc("GET "+Path+"/{$}", c.companiesPage)
	m.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, Path+"/", http.StatusFound) })
	m.HandleFunc("GET "+Path+"/login", c.loginPage)
	m.HandleFunc("POST "+Path+"/logout", c.logout)
	m.HandleFunc("GET "+Path+"/account", c.accountPage)
	m.HandleFunc("POST "+Path+"/account/delete", c.deleteAccount)
	m.HandleFunc("GET "+Path+"/credits", c.creditsPage)
	// Founding
	m.HandleFunc("POST "+Path+"/companies", c.createCompany)
	m.HandleFunc("GET "+Path+"/found", c.foundingPage)
	m.HandleFunc("GET "+Path+"/found.json", c.foundingState)
	m.HandleFunc("POST "+Path+"/found", c.startFounding)
	m.HandleFunc("POST "+Path+"/found/answer", c.answerFounding)
	m.HandleFunc("GET "+Path+"/handle-check.json", c.handleCheck)
	// A company
	m.HandleFunc("GET "+Path+"/c/{id}", c.dashboardPage)
	m.HandleFunc("GET "+Path+"/c/{id}/activity", c.activityPage)
	m.HandleFunc("GET "+Path+"/c/{id}/chat", c.chatPage)
	m.HandleFunc("POST "+Path+"/c/{id}/messages", c.sendMessage)
	m.HandleFunc("GET "+Path+"/turns/{turn}/state", c.turnState)
	m.HandleFunc("POST "+Path+"/turns/{turn}/interrupt", c.interruptTurn)
	m.HandleFunc("GET "+Path+"/c/{id}/files", c.filesPage)
	m.HandleFunc("POST "+Path+"/c/{id}/files", c.uploadFile)
	m.HandleFunc("GET "+Path+"/c/{id}/files/{file}", c.downloadFile)
	m.HandleFunc("POST "+Path+"/c/{id}/files/{file}/delete", c.deleteFile)
	m.HandleFunc("GET "+Path+"/c/{id}/docs", c.documentsPage)
	m.HandleFunc("GET "+Path+"/c/{id}/docs/{type}", c.documentPage)
	m.HandleFunc("POST "+Path+"/c/{id}/docs/{type}", c.saveDocument)
	m.HandleFunc("GET "+Path+"/c/{id}/tasks", c.tasksPage)
	m.HandleFunc("POST "+Path+"/c/{id}/tasks", c.createTask)
	m.HandleFunc("POST "+Path+"/c/{id}/tasks/{task}/status", c.setTaskStatus)
	m.HandleFunc("GET "+Path+"/c/{id}/analytics", c.analyticsPage)
	m.HandleFunc("GET "+Path+"/c/{id}/domains", c.domainsPage)
	m.HandleFunc("POST "+Path+"/c/{id}/domains/buy", c.buyDomain)
	m.HandleFunc("POST "+Path+"/c/{id}/domains/{purchase}/attach", c.attachDomain)
	m.HandleFunc("POST "+Path+"/c/{id}/domains/{purchase}/detach", c.detachDomain)
	m.HandleFunc("GET "+Path+"/c/{id}/ads", c.adsPage)
	m.HandleFunc("POST "+Path+"/c/{id}/ads/cap", c.setAdCap)
	m.HandleFunc("POST "+Path+"/c/{id}/ads/regenerate", c.regenerateAd)
	m.HandleFunc("GET "+Path+"/c/{id}/ads/preview", c.adPreview)
	m.HandleFunc("GET "+Path+"/c/{id}/settings", c.settingsPage)
	m.HandleFunc("POST "+Path+"/c/{id}/settings", c.saveSettings)
	m.HandleFunc("POST "+Path+"/c/{id}/api-key", c.revealAPIKey)
	m.HandleFunc("POST "+Path+"/c/{id}/api-key/rotate", c.rotateAPIKey)
	m.HandleFunc("POST "+Path+"/c/{id}/archive", c.archiveCompany)
	m.HandleFunc(Path+"/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Error: "The console has no page at this address.",
			Next: []link{{Path + "/", "Your companies"}}})
	})
}
