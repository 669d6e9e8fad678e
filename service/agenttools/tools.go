package agenttools

import (
	"bytes"
	"context"
	"time"
	"unicode/utf8"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/files"
	"holdco/service/growth"
	"holdco/service/mail"
	"holdco/service/prospects"
	"holdco/service/sales"
	"holdco/service/tasks"
	"holdco/service/webtools"
)

// Tool names the scripted model (providers/llm/scripted) calls; the
// catalog must keep their names and input shapes.
const (
	ToolAskQuestion   = "ask_question"
	ToolWriteDocument = "write_document"
	ToolCreateTask    = "create_task"
)

// MaxWriteFileBytes is the largest file write_file stores (the connector's
// upload_file limit): a file sent inline.
const MaxWriteFileBytes = files.MaxInlineBytes

// MaxReadFileBytes is the largest file read_file answers.
const MaxReadFileBytes = 512 << 10

// FileSource labels files the agents write.
const FileSource = "agent"

// Services are the use cases the tools map to.
type Services struct {
	Documents *documents.Service
	Tasks     *tasks.Service
	Files     *files.Service
	Mail      *mail.Service
	Sales     *sales.Service
	Companies *companies.Service
	Prospects *prospects.Service
	// Growth is domains and ads.
	Growth *growth.Service
	// Web is web research and image generation (paid acts).
	Web *webtools.Service
	// Repository is the companies' code repositories (worker role); nil
	// answers not_configured.
	Repository Repository
	// Database is the companies' own databases (worker role); nil answers
	// not_configured.
	Database Database
	// Analytics is the companies' web analytics.
	Analytics *analytics.Service
}

// New builds the catalog of the agents' tools over svc.
func New(svc Services) *Catalog {
	c := NewCatalog()
	RegisterControl[AskQuestionInput](c, ToolAskQuestion,
		"Ask the user a question and stop working until they answer. The turn ends waiting; the answer arrives as the user's next message.")
	registerDocuments(c, svc.Documents)
	registerTasks(c, svc.Tasks)
	registerFiles(c, svc.Files)
	registerMail(c, svc.Mail)
	registerSales(c, svc.Sales)
	registerActivity(c, svc.Companies)
	registerProspects(c, svc.Prospects)
	registerGrowth(c, svc.Growth)
	registerResearch(c, svc.Web)
	registerAnalytics(c, svc.Analytics)
	authorize := func(ctx context.Context, companyID string) error {
		_, err := svc.Companies.GetCompany(ctx, companyID)
		return err
	}
	registerRepository(c, svc.Repository, authorize)
	registerDatabase(c, svc.Database, authorize)
	// Holdco's own rows only. Not quick: whatever calls a provider (mail,
	// payments, domains, ads, research, images, the repository), the
	// files (blob storage), the company's database (a query of its own
	// length) and the analytics reports (which may fold first).
	c.markQuick(ToolAskQuestion, "list_documents", "read_document", ToolWriteDocument, "delete_document",
		"list_tasks", ToolCreateTask, "update_task", "list_activity", "list_prospects", "add_prospect", "update_prospect")
	return c
}

// AskQuestionInput is ask_question's input.
type AskQuestionInput struct {
	Question string `json:"question" jsonschema:"the question, one or a few sentences" maxLength:"2000"`
}

// Documents.

type ListDocumentsInput struct{}

type DocumentSummary struct {
	DocumentType string    `json:"document_type"`
	Title        string    `json:"title"`
	Visibility   string    `json:"visibility"`
	SizeBytes    int64     `json:"size_bytes"`
	Revision     int64     `json:"revision"`
	UpdatedBy    string    `json:"updated_by"`
	UpdatedAt    time.Time `json:"updated_at"`
}

type DocumentList struct {
	Documents []DocumentSummary `json:"documents"`
}

type ReadDocumentInput struct {
	DocumentType string `json:"document_type" jsonschema:"the document's type, a lower-case slug such as founding_plan or notes" maxLength:"64"`
}

type Document struct {
	DocumentSummary
	Content string `json:"content"`
}

// WriteDocumentInput is write_document's input (the scripted model sends
// document_type, title and content).
type WriteDocumentInput struct {
	DocumentType string `json:"document_type" jsonschema:"the document's type, a lower-case slug (a letter, then letters, digits, _ or -); writing an existing type replaces it" maxLength:"64"`
	Title        string `json:"title,omitempty" jsonschema:"a one-line title; empty uses the type's readable name" maxLength:"200"`
	Content      string `json:"content" jsonschema:"the whole document in Markdown, at most 256 KiB"`
	Visibility   string `json:"visibility,omitempty" jsonschema:"visible (the owner sees it) or internal (agents only); empty: internal for agent_ types, visible otherwise" enum:"visible,internal"`
}

type WriteDocumentResult struct {
	Document DocumentSummary `json:"document"`
	Created  bool            `json:"created"`
}

type DeleteDocumentInput struct {
	DocumentType string `json:"document_type" jsonschema:"the type of the document to delete" maxLength:"64"`
}

type Deleted struct {
	Deleted bool `json:"deleted"`
}

func summaryOf(d models.DocumentSummary) DocumentSummary {
	return DocumentSummary{DocumentType: d.DocumentType, Title: d.Title, Visibility: string(d.Visibility), SizeBytes: d.SizeBytes,
		Revision: d.Revision, UpdatedBy: string(d.UpdatedBy), UpdatedAt: d.UpdatedAt}
}

func docSummary(d models.Document) DocumentSummary {
	return summaryOf(models.DocumentSummary{DocumentType: d.DocumentType, Title: d.Title, Visibility: d.Visibility, SizeBytes: d.SizeBytes,
		Revision: d.Revision, UpdatedBy: d.UpdatedBy, UpdatedAt: d.UpdatedAt})
}

func registerDocuments(c *Catalog, s *documents.Service) {
	Register(c, "list_documents", "List the company's documents (without content), internal ones included.",
		func(ctx context.Context, companyID string, _ ListDocumentsInput) (DocumentList, error) {
			ds, err := s.List(ctx, companyID, documents.ListInput{IncludeInternal: true})
			if err != nil {
				return DocumentList{}, err
			}
			out := DocumentList{Documents: make([]DocumentSummary, len(ds))}
			for i, d := range ds {
				out.Documents[i] = summaryOf(d)
			}
			return out, nil
		})
	Register(c, "read_document", "Read one of the company's documents with its content.",
		func(ctx context.Context, companyID string, in ReadDocumentInput) (Document, error) {
			d, err := s.Get(ctx, companyID, in.DocumentType)
			if err != nil {
				return Document{}, err
			}
			return Document{DocumentSummary: docSummary(d), Content: d.Content}, nil
		})
	Register(c, ToolWriteDocument, "Create or replace one of the company's documents (Markdown).",
		func(ctx context.Context, companyID string, in WriteDocumentInput) (WriteDocumentResult, error) {
			d, created, err := s.Upsert(ctx, companyID, in.DocumentType, documents.UpsertInput{Content: in.Content, Title: in.Title,
				Visibility: models.DocumentVisibility(in.Visibility)})
			if err != nil {
				return WriteDocumentResult{}, err
			}
			return WriteDocumentResult{Document: docSummary(d), Created: created}, nil
		})
	Register(c, "delete_document", "Delete one of the company's documents.",
		func(ctx context.Context, companyID string, in DeleteDocumentInput) (Deleted, error) {
			if err := s.Delete(ctx, companyID, in.DocumentType); err != nil {
				return Deleted{}, err
			}
			return Deleted{Deleted: true}, nil
		})
}

// Tasks.

type ListTasksInput struct {
	Statuses []string `json:"statuses,omitempty" jsonschema:"keep tasks in any of these statuses (pending, dispatched, running, done, failed, cancelled); empty keeps all" enum:"pending,dispatched,running,done,failed,cancelled"`
}

type Task struct {
	ID            string     `json:"id"`
	Title         string     `json:"title"`
	Description   string     `json:"description"`
	Status        string     `json:"status"`
	Priority      string     `json:"priority"`
	CreatedBy     string     `json:"created_by"`
	DueAt         *time.Time `json:"due_at"`
	FailureReason string     `json:"failure_reason,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

type TaskList struct {
	Tasks []Task `json:"tasks"`
	// Total counts every match; more than len(Tasks) when the list was cut.
	Total int64 `json:"total"`
}

// CreateTaskInput is create_task's input (the scripted model sends title
// and description).
type CreateTaskInput struct {
	Title       string     `json:"title" jsonschema:"one line" maxLength:"200"`
	Description string     `json:"description,omitempty" jsonschema:"Markdown, several lines allowed" maxLength:"20000"`
	Priority    string     `json:"priority,omitempty" jsonschema:"default normal" enum:"low,normal,high,urgent"`
	DueAt       *time.Time `json:"due_at,omitempty" jsonschema:"when it is due (RFC 3339)"`
}

type UpdateTaskInput struct {
	TaskID        string     `json:"task_id" jsonschema:"the task's id" maxLength:"36"`
	Title         *string    `json:"title,omitempty" maxLength:"200" jsonschema:"a new title"`
	Description   *string    `json:"description,omitempty" maxLength:"20000" jsonschema:"a new description"`
	Priority      *string    `json:"priority,omitempty" enum:"low,normal,high,urgent" jsonschema:"a new priority"`
	Status        *string    `json:"status,omitempty" enum:"pending,dispatched,running,done,failed,cancelled" jsonschema:"move the task through its lifecycle"`
	DueAt         *time.Time `json:"due_at,omitempty" jsonschema:"a new due date (RFC 3339)"`
	ClearDueAt    bool       `json:"clear_due_at,omitempty" jsonschema:"remove the due date"`
	FailureReason *string    `json:"failure_reason,omitempty" maxLength:"1000" jsonschema:"why, with a move to failed"`
}

func taskOf(t models.Task) Task {
	return Task{ID: t.ID, Title: t.Title, Description: t.Description, Status: string(t.Status), Priority: string(t.Priority),
		CreatedBy: string(t.CreatedBy), DueAt: t.DueAt, FailureReason: t.FailureReason, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

func registerTasks(c *Catalog, s *tasks.Service) {
	Register(c, "list_tasks", "List the company's tasks, newest first.",
		func(ctx context.Context, companyID string, in ListTasksInput) (TaskList, error) {
			st := make([]models.TaskStatus, len(in.Statuses))
			for i, x := range in.Statuses {
				st[i] = models.TaskStatus(x)
			}
			l, err := s.List(ctx, companyID, tasks.ListInput{Statuses: st})
			if err != nil {
				return TaskList{}, err
			}
			out := TaskList{Tasks: make([]Task, len(l.Tasks)), Total: l.Total}
			for i, t := range l.Tasks {
				out.Tasks[i] = taskOf(t)
			}
			return out, nil
		})
	Register(c, ToolCreateTask, "Create a task for the company (it starts pending).",
		func(ctx context.Context, companyID string, in CreateTaskInput) (Task, error) {
			t, err := s.Create(ctx, companyID, tasks.CreateInput{Title: in.Title, Description: in.Description,
				Priority: models.TaskPriority(in.Priority), DueAt: in.DueAt})
			return taskOf(t), err
		})
	Register(c, "update_task", "Change one of the company's tasks; fields left out stay as they are.",
		func(ctx context.Context, companyID string, in UpdateTaskInput) (Task, error) {
			// The task must be this company's: the principal may reach
			// several companies (a user through the connector).
			cur, err := s.Get(ctx, in.TaskID)
			if err != nil {
				return Task{}, err
			}
			if cur.CompanyID != companyID {
				return Task{}, models.Errorf(models.CodeNotFound, "Task %s does not exist in this company.", in.TaskID).WithField("task_id")
			}
			up := tasks.UpdateInput{Title: in.Title, Description: in.Description, DueAt: in.DueAt, ClearDueAt: in.ClearDueAt, FailureReason: in.FailureReason}
			if in.Priority != nil {
				p := models.TaskPriority(*in.Priority)
				up.Priority = &p
			}
			if in.Status != nil {
				st := models.TaskStatus(*in.Status)
				up.Status = &st
			}
			t, err := s.Update(ctx, in.TaskID, up)
			return taskOf(t), err
		})
}

// Files.

type ListFilesInput struct{}

type File struct {
	ID          string    `json:"id"`
	Path        string    `json:"path"`
	SizeBytes   int64     `json:"size_bytes"`
	ContentType string    `json:"content_type"`
	Source      string    `json:"source"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type FileList struct {
	Files      []File `json:"files"`
	UsedBytes  int64  `json:"used_bytes"`
	QuotaBytes int64  `json:"quota_bytes"`
}

type WriteFileInput struct {
	Path        string `json:"path" jsonschema:"where the file goes, e.g. reports/q1.md; a path that holds a file replaces it" maxLength:"1024"`
	Content     string `json:"content" jsonschema:"the file's content: text, or base64 when encoding is base64; at most 3 MB decoded"`
	Encoding    string `json:"encoding,omitempty" jsonschema:"text (default) or base64" enum:"text,base64"`
	ContentType string `json:"content_type,omitempty" jsonschema:"the media type, e.g. text/markdown; default text/plain for text, application/octet-stream for base64" maxLength:"255"`
}

type ReadFileInput struct {
	FileID string `json:"file_id" jsonschema:"the file's id (from list_files)" maxLength:"36"`
}

type FileContent struct {
	File    File   `json:"file"`
	Content string `json:"content" jsonschema:"the file's text"`
}

func fileOf(f models.CompanyFile) File {
	return File{ID: f.ID, Path: f.Path, SizeBytes: f.SizeBytes, ContentType: f.ContentType, Source: f.Source, UpdatedAt: f.UpdatedAt}
}

func registerFiles(c *Catalog, s *files.Service) {
	Register(c, "list_files", "List the company's files ordered by path, with the storage used and the quota.",
		func(ctx context.Context, companyID string, _ ListFilesInput) (FileList, error) {
			l, err := s.List(ctx, companyID)
			if err != nil {
				return FileList{}, err
			}
			out := FileList{Files: make([]File, len(l.Files)), UsedBytes: l.UsedBytes, QuotaBytes: l.QuotaBytes}
			for i, f := range l.Files {
				out.Files[i] = fileOf(f)
			}
			return out, nil
		})
	Register(c, "read_file", "Read one of the company's text files (at most 512 KiB); binary files are refused.",
		func(ctx context.Context, companyID string, in ReadFileInput) (FileContent, error) {
			f, data, err := s.Read(ctx, companyID, in.FileID, MaxReadFileBytes)
			if err != nil {
				return FileContent{}, err
			}
			if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
				return FileContent{}, models.Errorf(models.CodeInvalidArgument,
					"%s is not a text file (%s); read_file returns text only.", f.Path, f.ContentType).WithField("file_id")
			}
			return FileContent{File: fileOf(f), Content: string(data)}, nil
		})
	Register(c, "write_file", "Store a file in the company's files (text or base64 content, at most 3 MB).",
		func(ctx context.Context, companyID string, in WriteFileInput) (File, error) {
			body, err := files.InlineContent(in.Content, in.Encoding == "base64", "content")
			if err != nil {
				return File{}, err
			}
			ct := in.ContentType
			switch {
			case ct != "":
			case in.Encoding == "base64":
				ct = "application/octet-stream"
			default:
				ct = "text/plain; charset=utf-8"
			}
			if in.Encoding != "base64" && !utf8.Valid(body) {
				return File{}, invalid("content", "content is not valid UTF-8; send binary content as base64.")
			}
			f, err := s.Upload(ctx, companyID, files.UploadInput{Path: in.Path, Source: FileSource, Filename: files.Name(in.Path),
				ContentType: ct, Size: int64(len(body)), Body: bytes.NewReader(body)})
			return fileOf(f), err
		})
}

// Email.

type ListEmailsInput struct {
	Limit     int    `json:"limit,omitempty" jsonschema:"how many, 1 to 100 (default 20)" minimum:"1" maximum:"100"`
	Direction string `json:"direction,omitempty" jsonschema:"inbound or outbound; empty lists both" enum:"inbound,outbound"`
	BeforeID  string `json:"before_id,omitempty" jsonschema:"continue after this message (next_before_id of the previous page)" maxLength:"36"`
	// Before is the instant of the previous page's last message.
	Before *time.Time `json:"before,omitempty" jsonschema:"with before_id: next_before of the previous page"`
}

type Email struct {
	ID        string     `json:"id"`
	Direction string     `json:"direction"`
	Delivery  string     `json:"delivery"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	ReplyTo   string     `json:"reply_to,omitempty"`
	Subject   string     `json:"subject"`
	ReadAt    *time.Time `json:"read_at"`
	CreatedAt time.Time  `json:"created_at"`
}

type EmailPage struct {
	Address      string     `json:"address"`
	Emails       []Email    `json:"emails"`
	NextBefore   *time.Time `json:"next_before,omitempty"`
	NextBeforeID string     `json:"next_before_id,omitempty"`
}

type ReadEmailInput struct {
	EmailID string `json:"email_id" jsonschema:"the message's id" maxLength:"36"`
}

type EmailWithBody struct {
	Email
	Text string `json:"text"`
	HTML string `json:"html,omitempty"`
}

type SendEmailInput struct {
	To      string `json:"to" jsonschema:"one recipient: jane@example.com or Jane <jane@example.com>" maxLength:"320"`
	Subject string `json:"subject" jsonschema:"one line" maxLength:"250"`
	Text    string `json:"text" jsonschema:"the plain-text body, at most 100,000 bytes"`
	ReplyTo string `json:"reply_to,omitempty" jsonschema:"an address replies go to" maxLength:"320"`
}

func emailOf(e models.Email) Email {
	return Email{ID: e.ID, Direction: string(e.Direction), Delivery: string(e.Delivery), From: e.FromAddress, To: e.ToAddress,
		ReplyTo: e.ReplyTo, Subject: e.Subject, ReadAt: e.ReadAt, CreatedAt: e.CreatedAt}
}

func registerMail(c *Catalog, s *mail.Service) {
	Register(c, "list_emails", "List the company's inbox (received and sent), newest first, without bodies.",
		func(ctx context.Context, companyID string, in ListEmailsInput) (EmailPage, error) {
			li := mail.ListInput{Limit: in.Limit, Direction: in.Direction, BeforeID: in.BeforeID}
			if in.Before != nil {
				li.Before = *in.Before
			}
			p, err := s.List(ctx, companyID, li)
			if err != nil {
				return EmailPage{}, err
			}
			out := EmailPage{Address: p.Address, Emails: make([]Email, len(p.Emails))}
			for i, e := range p.Emails {
				out.Emails[i] = emailOf(e)
			}
			if p.Next != nil {
				at := p.Next.CreatedAt
				out.NextBefore, out.NextBeforeID = &at, p.Next.ID
			}
			return out, nil
		})
	Register(c, "read_email", "Read one of the company's messages with its body.",
		func(ctx context.Context, companyID string, in ReadEmailInput) (EmailWithBody, error) {
			e, err := s.Get(ctx, companyID, in.EmailID)
			if err != nil {
				return EmailWithBody{}, err
			}
			return EmailWithBody{Email: emailOf(e), Text: e.TextBody, HTML: e.HTMLBody}, nil
		})
	Register(c, "send_email", "Send a plain-text email from the company's address (a daily limit applies).",
		func(ctx context.Context, companyID string, in SendEmailInput) (Email, error) {
			e, err := s.Send(ctx, companyID, mail.SendInput{To: in.To, Subject: in.Subject, Text: in.Text, ReplyTo: in.ReplyTo})
			return emailOf(e), err
		})
}

// Sales.

type ListProductsInput struct{}

type Product struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	PriceCents  int64     `json:"price_cents"`
	Currency    string    `json:"currency"`
	Interval    string    `json:"interval"`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"created_at"`
}

type ProductList struct {
	Products []Product `json:"products"`
}

type CreateProductInput struct {
	Name        string `json:"name" maxLength:"200" jsonschema:"the product's name"`
	Description string `json:"description,omitempty" maxLength:"2000" jsonschema:"what the customer buys"`
	PriceCents  int64  `json:"price_cents" minimum:"50" maximum:"99999999" jsonschema:"the price in cents"`
	Currency    string `json:"currency,omitempty" enum:"usd" jsonschema:"ISO 4217, lower case; usd only for now"`
	Interval    string `json:"interval,omitempty" enum:"month,year" jsonschema:"month or year for a subscription; leave out for a one-time purchase"`
}

type CreatePaymentLinkInput struct {
	ProductID  string `json:"product_id" maxLength:"36" jsonschema:"the product to sell"`
	SuccessURL string `json:"success_url,omitempty" maxLength:"2048" jsonschema:"where the customer lands after paying (absolute http or https URL)"`
}

type PaymentLink struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

type ListPaymentsInput struct {
	Limit int `json:"limit,omitempty" minimum:"1" maximum:"100" jsonschema:"how many, newest first (default 10)"`
}

type Payment struct {
	ID             string    `json:"id"`
	ProductID      string    `json:"product_id"`
	SubscriptionID string    `json:"subscription_id,omitempty"`
	AmountCents    int64     `json:"amount_cents"`
	RefundedCents  int64     `json:"refunded_cents"`
	Currency       string    `json:"currency"`
	PaidAt         time.Time `json:"paid_at"`
}

type PaymentList struct {
	Payments []Payment `json:"payments"`
}

type ListSubscriptionsInput struct{}

type Subscription struct {
	ID                string     `json:"id"`
	ProductID         string     `json:"product_id"`
	Status            string     `json:"status"`
	CurrentPeriodEnd  *time.Time `json:"current_period_end"`
	CancelAtPeriodEnd bool       `json:"cancel_at_period_end"`
	StartedAt         *time.Time `json:"started_at"`
	CanceledAt        *time.Time `json:"canceled_at"`
}

type SubscriptionList struct {
	Subscriptions []Subscription `json:"subscriptions"`
}

type GetRevenueInput struct{}

type Revenue struct {
	Currency              string    `json:"currency"`
	GrossCents            int64     `json:"gross_cents"`
	RefundedCents         int64     `json:"refunded_cents"`
	LifetimeEarningsCents int64     `json:"lifetime_earnings_cents"`
	BalanceCents          int64     `json:"balance_cents"`
	Payments              int64     `json:"payments"`
	RecentPayments        []Payment `json:"recent_payments"`
}

func productOf(p models.Product) Product {
	return Product{ID: p.ID, Name: p.Name, Description: p.Description, PriceCents: p.PriceCents, Currency: p.Currency,
		Interval: string(p.Interval), Active: p.Active, CreatedAt: p.CreatedAt}
}

func paymentsOf(ps []models.CompanyPayment) []Payment {
	out := make([]Payment, len(ps))
	for i, p := range ps {
		out[i] = Payment{ID: p.ID, ProductID: p.ProductID, SubscriptionID: p.SubscriptionID, AmountCents: p.AmountCents,
			RefundedCents: p.RefundedCents, Currency: p.Currency, PaidAt: p.PaidAt}
	}
	return out
}

func registerSales(c *Catalog, s *sales.Service) {
	Register(c, "list_products", "List the products the company sells.",
		func(ctx context.Context, companyID string, _ ListProductsInput) (ProductList, error) {
			ps, err := s.ListProducts(ctx, companyID)
			if err != nil {
				return ProductList{}, err
			}
			out := ProductList{Products: make([]Product, len(ps))}
			for i, p := range ps {
				out.Products[i] = productOf(p)
			}
			return out, nil
		})
	Register(c, "create_product", "Create a product with its one price (one-time, or a monthly or yearly subscription).",
		func(ctx context.Context, companyID string, in CreateProductInput) (Product, error) {
			p, err := s.CreateProduct(ctx, companyID, sales.ProductInput{Name: in.Name, Description: in.Description,
				PriceCents: in.PriceCents, Currency: in.Currency, Interval: models.BillingInterval(in.Interval)})
			return productOf(p), err
		})
	Register(c, "create_payment_link", "Create a reusable checkout page where customers buy one of the company's products.",
		func(ctx context.Context, companyID string, in CreatePaymentLinkInput) (PaymentLink, error) {
			l, err := s.CreateCheckoutLink(ctx, companyID, in.ProductID, sales.CheckoutLinkInput{SuccessURL: in.SuccessURL})
			return PaymentLink{ID: l.ID, URL: l.URL}, err
		})
	Register(c, "list_payments", "List the payments the company's customers made, newest first.",
		func(ctx context.Context, companyID string, in ListPaymentsInput) (PaymentList, error) {
			ps, err := s.ListPayments(ctx, companyID, in.Limit)
			if err != nil {
				return PaymentList{}, err
			}
			return PaymentList{Payments: paymentsOf(ps)}, nil
		})
	Register(c, "list_subscriptions", "List the subscriptions the company's customers bought, newest first.",
		func(ctx context.Context, companyID string, _ ListSubscriptionsInput) (SubscriptionList, error) {
			ss, err := s.ListSubscriptions(ctx, companyID)
			if err != nil {
				return SubscriptionList{}, err
			}
			out := SubscriptionList{Subscriptions: make([]Subscription, len(ss))}
			for i, x := range ss {
				out.Subscriptions[i] = Subscription{ID: x.ID, ProductID: x.ProductID, Status: x.Status, CurrentPeriodEnd: x.CurrentPeriodEnd,
					CancelAtPeriodEnd: x.CancelAtPeriodEnd, StartedAt: x.StartedAt, CanceledAt: x.CanceledAt}
			}
			return out, nil
		})
	Register(c, "get_revenue", "The company's revenue: gross, refunded, lifetime earnings, balance and the latest payments.",
		func(ctx context.Context, companyID string, _ GetRevenueInput) (Revenue, error) {
			r, err := s.Revenue(ctx, companyID)
			if err != nil {
				return Revenue{}, err
			}
			return Revenue{Currency: r.Currency, GrossCents: r.GrossCents, RefundedCents: r.RefundedCents,
				LifetimeEarningsCents: r.LifetimeEarningsCents, BalanceCents: r.BalanceCents, Payments: r.Payments,
				RecentPayments: paymentsOf(r.RecentPayments)}, nil
		})
}

// Activity.

type ListActivityInput struct {
	Limit    int        `json:"limit,omitempty" minimum:"1" maximum:"100" jsonschema:"how many events, newest first (default 50)"`
	Before   *time.Time `json:"before,omitempty" jsonschema:"next_before of the previous page"`
	BeforeID string     `json:"before_id,omitempty" maxLength:"36" jsonschema:"next_before_id of the previous page"`
}

type ActivityEvent struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Actor     string    `json:"actor"`
	Summary   string    `json:"summary"`
	Subject   string    `json:"subject,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type ActivityPage struct {
	Events       []ActivityEvent `json:"events"`
	NextBefore   *time.Time      `json:"next_before,omitempty"`
	NextBeforeID string          `json:"next_before_id,omitempty"`
}

func registerActivity(c *Catalog, s *companies.Service) {
	Register(c, "list_activity", "List the company's activity feed (documents, tasks, files, email, sales, milestones), newest first.",
		func(ctx context.Context, companyID string, in ListActivityInput) (ActivityPage, error) {
			ai := companies.ActivityInput{Limit: in.Limit, BeforeID: in.BeforeID}
			if in.Before != nil {
				ai.Before = *in.Before
			}
			p, err := s.Activity(ctx, companyID, ai)
			if err != nil {
				return ActivityPage{}, err
			}
			out := ActivityPage{Events: make([]ActivityEvent, len(p.Events))}
			for i, e := range p.Events {
				out.Events[i] = ActivityEvent{ID: e.ID, Kind: string(e.Kind), Actor: string(e.Actor), Summary: e.Summary, Subject: e.Subject, CreatedAt: e.CreatedAt}
			}
			if p.Next != nil {
				at := p.Next.Before
				out.NextBefore, out.NextBeforeID = &at, p.Next.BeforeID
			}
			return out, nil
		})
}
